// The simulated NVML (../../README.md, "NVML"): devices as the simulated driver configures them, the processes
// GPUMEMTRACE_SIM_OTHERS_MEMORY lists and the live processes that publish their use in GPUMEMTRACE_SIM_STATE_DIR.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include "nvml_api.h"
#include "sim_config.h"

struct nvmlDevice_st {
  int index = 0;
};

namespace gpumemtrace::sim {
namespace {

constexpr const char* kDeviceName = "gpumemtrace simulated device";
constexpr const char* kDriverVersionText = "13.0-gpumemtrace-simulated";
constexpr unsigned int kNoInstance = 0xFFFFFFFFu;  // gpuInstanceId/computeInstanceId outside MIG

struct Nvml {
  std::mutex mu;
  bool configured = false;
  nvmlReturn_t config_result = NVML_ERROR_UNINITIALIZED;
  int init_count = 0;
  SimConfig config;
  nvmlDevice_st handles[kMaxSimDevices];
};

Nvml& nvml() {
  static Nvml* instance = new Nvml;  // never destroyed: callers may come during exit
  return *instance;
}

bool initialized() {
  Nvml& n = nvml();
  std::lock_guard lock(n.mu);
  return n.init_count > 0;
}

nvmlDevice_st* handle_of(nvmlDevice_t device) {
  Nvml& n = nvml();
  if (!device || device < n.handles || device >= n.handles + n.config.devices) return nullptr;
  return device;
}

nvmlReturn_t copy_text(const std::string& text, char* out, unsigned int length) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

struct Holder {
  uint32_t pid;
  uint64_t bytes;
};

bool alive(long pid) { return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

// The live processes of the state directory with memory on `device`, by pid.
std::vector<Holder> published_holders(int device) {
  std::vector<Holder> holders;
  std::string dir = sim_state_dir();
  if (dir.empty()) return holders;
  DIR* listing = opendir(dir.c_str());
  if (!listing) return holders;
  const size_t prefix = std::strlen(kSimStatePrefix);
  while (dirent* entry = readdir(listing)) {
    if (std::strncmp(entry->d_name, kSimStatePrefix, prefix) != 0) continue;
    char* end = nullptr;
    long pid = std::strtol(entry->d_name + prefix, &end, 10);
    if (pid <= 0 || *end != '\0' || !alive(pid)) continue;
    int fd = open(sim_state_file(dir, pid).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    uint64_t used = 0;
    ssize_t n = pread(fd, &used, sizeof used, static_cast<off_t>(sizeof used * static_cast<size_t>(device)));
    close(fd);
    if (n == static_cast<ssize_t>(sizeof used) && used > 0) holders.push_back({static_cast<uint32_t>(pid), used});
  }
  closedir(listing);
  std::sort(holders.begin(), holders.end(), [](const Holder& a, const Holder& b) { return a.pid < b.pid; });
  return holders;
}

// The listed processes of the device first, in their order, then the published ones.
std::vector<Holder> holders(int device) {
  std::vector<Holder> all;
  for (const OtherProcess& p : nvml().config.other_processes)
    if (p.device == device && p.bytes > 0) all.push_back({p.pid, p.bytes});
  std::vector<Holder> published = published_holders(device);
  all.insert(all.end(), published.begin(), published.end());
  return all;
}

// Bytes in use on the device: the others' (listed or sizes only) and the published processes'.
uint64_t used_bytes(int device) {
  uint64_t used = nvml().config.others[static_cast<size_t>(device)];
  for (const Holder& h : published_holders(device)) used += h.bytes;
  return std::min(used, nvml().config.capacity);
}

std::string uuid_text(int index) {
  std::array<unsigned char, 16> b = sim_device_uuid(index);
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

// A live process's name as NVML gives it: its command's first word (argv[0]); else its comm.
std::string live_process_name(unsigned int pid) {
  std::string base = "/proc/" + std::to_string(pid);
  std::ifstream cmdline(base + "/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  std::string first = all.substr(0, all.find('\0'));
  if (!first.empty()) return first;
  std::ifstream comm(base + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

}  // namespace
}  // namespace gpumemtrace::sim

using namespace gpumemtrace::sim;

#define SIM_NVML_EXPORT extern "C" __attribute__((visibility("default")))
#define SIM_NVML_REQUIRE_INIT() \
  if (!initialized()) return NVML_ERROR_UNINITIALIZED
#define SIM_NVML_DEVICE(var, device)                    \
  SIM_NVML_REQUIRE_INIT();                              \
  nvmlDevice_st* var = handle_of(device);               \
  if (!var) return NVML_ERROR_INVALID_ARGUMENT

SIM_NVML_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mu);
  if (!n.configured) {
    n.configured = true;
    bool ok = read_sim_config(&n.config, "NVML", "nvmlInit_v2 fails with NVML_ERROR_UNKNOWN");
    n.config_result = ok ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
    for (int i = 0; i < kMaxSimDevices; i++) n.handles[i].index = i;
  }
  if (n.config_result != NVML_SUCCESS) return n.config_result;
  ++n.init_count;
  return NVML_SUCCESS;
}

SIM_NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  Nvml& n = nvml();
  std::lock_guard lock(n.mu);
  if (n.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  --n.init_count;
  return NVML_SUCCESS;
}

SIM_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

SIM_NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  SIM_NVML_REQUIRE_INIT();
  return copy_text(kDriverVersionText, version, length);
}

SIM_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* cudaDriverVersion) {
  SIM_NVML_REQUIRE_INIT();
  if (!cudaDriverVersion) return NVML_ERROR_INVALID_ARGUMENT;
  *cudaDriverVersion = kSimDriverVersion;
  return NVML_SUCCESS;
}

SIM_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}

SIM_NVML_EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char* name, unsigned int length) {
  SIM_NVML_REQUIRE_INIT();
  for (const OtherProcess& p : nvml().config.other_processes)
    if (p.pid == pid) return copy_text(p.command, name, length);
  if (!alive(pid)) return NVML_ERROR_NOT_FOUND;
  return copy_text(live_process_name(pid), name, length);
}

SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  SIM_NVML_REQUIRE_INIT();
  if (!deviceCount) return NVML_ERROR_INVALID_ARGUMENT;
  *deviceCount = static_cast<unsigned int>(nvml().config.devices);
  return NVML_SUCCESS;
}

SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  SIM_NVML_REQUIRE_INIT();
  if (!device || index >= static_cast<unsigned int>(nvml().config.devices)) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &nvml().handles[index];
  return NVML_SUCCESS;
}

SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  SIM_NVML_DEVICE(d, device);
  return copy_text(kDeviceName, name, length);
}

SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  SIM_NVML_DEVICE(d, device);
  return copy_text(uuid_text(d->index), uuid, length);
}

SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  SIM_NVML_DEVICE(d, device);
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = nvmlPciInfo_t{};
  pci->bus = static_cast<unsigned int>(d->index + 1);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
  std::snprintf(pci->busId, sizeof pci->busId, "%s", sim_pci_bus_id(d->index).c_str());
  return NVML_SUCCESS;
}

SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  SIM_NVML_DEVICE(d, device);
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  memory->total = nvml().config.capacity;
  memory->used = used_bytes(d->index);
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

// "0000:01:00.0" (the runtime's form) or "00000000:01:00.0" (NVML's), any case: compared as numbers.
SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device) {
  SIM_NVML_REQUIRE_INIT();
  if (!pciBusId || !device) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned domain = 0, bus = 0, slot = 0, function = 0;
  if (std::sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &slot, &function) != 4) return NVML_ERROR_INVALID_ARGUMENT;
  for (int index = 0; index < nvml().config.devices; ++index) {
    unsigned d = 0, b = 0, s = 0, f = 0;
    std::sscanf(sim_pci_bus_id(index).c_str(), "%x:%x:%x.%x", &d, &b, &s, &f);
    if (d == domain && b == bus && s == slot && f == function) {
      *device = &nvml().handles[static_cast<size_t>(index)];
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int,
                                                                 nvmlIntNvLinkDeviceType_t*) {
  SIM_NVML_DEVICE(d, device);
  (void)d;
  return NVML_ERROR_NOT_SUPPORTED;
}

SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int, nvmlPciInfo_t*) {
  SIM_NVML_DEVICE(d, device);
  (void)d;
  return NVML_ERROR_NOT_SUPPORTED;
}

SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t*) {
  SIM_NVML_DEVICE(d, device);
  (void)d;
  return NVML_ERROR_NOT_SUPPORTED;
}

// The processes holding memory on the device, as NVML's two layouts of the list.
template <typename Info>
nvmlReturn_t list_processes(nvmlDevice_t device, unsigned int* infoCount, Info* infos) {
  SIM_NVML_DEVICE(d, device);
  if (!infoCount) return NVML_ERROR_INVALID_ARGUMENT;
  std::vector<Holder> all = holders(d->index);
  unsigned int room = *infoCount;
  *infoCount = static_cast<unsigned int>(all.size());
  if (all.size() > room) return NVML_ERROR_INSUFFICIENT_SIZE;
  if (!all.empty() && !infos) return NVML_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < all.size(); i++) {
    infos[i] = Info{};
    infos[i].pid = all[i].pid;
    infos[i].usedGpuMemory = all[i].bytes;
    if constexpr (requires { infos[i].gpuInstanceId; }) infos[i].gpuInstanceId = infos[i].computeInstanceId = kNoInstance;
  }
  return NVML_SUCCESS;
}

// The legacy layout (PyTorch's out-of-memory message names the processes with it, binding this name).
SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* infoCount,
                                                                  nvmlProcessInfo_v1_t* infos) {
  return list_processes(device, infoCount, infos);
}

SIM_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                                     nvmlProcessInfo_t* infos) {
  return list_processes(device, infoCount, infos);
}
