#include "common/nvml_reader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace gpumemtrace::nvml {

namespace {

// The public API's types, as nvml.h declares them (NVML_API_VERSION 13).
using Return = int;
constexpr Return kSuccess = 0;
constexpr Return kInsufficientSize = 7;
using Device = struct nvmlDevice_st*;
struct PciInfo {
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct Memory {
  unsigned long long total, free, used;
};
struct ProcessInfo {  // nvmlProcessInfo_v2_t, which _v3 fills
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id, compute_instance_id;
};
constexpr unsigned kTextSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE: the largest
constexpr unsigned kProcessNameSize = 1024;
constexpr unsigned long long kNotAvailable = ~0ull;  // NVML_VALUE_NOT_AVAILABLE

}  // namespace

// The functions the reader calls, declared once: X(member, symbol, type).
#define GPUMEMTRACE_NVML_FUNCTIONS(X)                                                                  \
  X(init, "nvmlInit_v2", Return (*)())                                                                 \
  X(shutdown, "nvmlShutdown", Return (*)())                                                            \
  X(error_string, "nvmlErrorString", const char* (*)(Return))                                          \
  X(driver_version, "nvmlSystemGetDriverVersion", Return (*)(char*, unsigned))                         \
  X(cuda_driver_version, "nvmlSystemGetCudaDriverVersion", Return (*)(int*))                           \
  X(process_name, "nvmlSystemGetProcessName", Return (*)(unsigned, char*, unsigned))                   \
  X(count, "nvmlDeviceGetCount_v2", Return (*)(unsigned*))                                             \
  X(handle_by_index, "nvmlDeviceGetHandleByIndex_v2", Return (*)(unsigned, Device*))                   \
  X(name, "nvmlDeviceGetName", Return (*)(Device, char*, unsigned))                                    \
  X(uuid, "nvmlDeviceGetUUID", Return (*)(Device, char*, unsigned))                                    \
  X(pci_info, "nvmlDeviceGetPciInfo_v3", Return (*)(Device, PciInfo*))                                 \
  X(memory_info, "nvmlDeviceGetMemoryInfo", Return (*)(Device, Memory*))                               \
  X(compute_processes, "nvmlDeviceGetComputeRunningProcesses_v3", Return (*)(Device, unsigned*, ProcessInfo*))

struct Library::Functions {
#define GPUMEMTRACE_NVML_MEMBER(member, symbol, type) std::type_identity_t<type> member;
  GPUMEMTRACE_NVML_FUNCTIONS(GPUMEMTRACE_NVML_MEMBER)
#undef GPUMEMTRACE_NVML_MEMBER
};

Library::Library(SymbolLookup lookup, std::string path) {
  if (!lookup) lookup = dlsym;
  if (path.empty()) {
    const char* chosen = std::getenv("GPUMEMTRACE_NVML_LIBRARY");
    path = chosen && *chosen ? chosen : "libnvidia-ml.so.1";
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    why_ = path + " not found";
    return;
  }
  static Functions functions;  // one NVML per process; the pointers never change once found
  bool all = true;
  auto find = [&](auto& slot, const char* symbol) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(lookup(handle, symbol));
    if (!slot && all) {
      all = false;
      why_ = path + " has no " + symbol;
    }
  };
#define GPUMEMTRACE_NVML_FIND(member, symbol, type) find(functions.member, symbol);
  GPUMEMTRACE_NVML_FUNCTIONS(GPUMEMTRACE_NVML_FIND)
#undef GPUMEMTRACE_NVML_FIND
  if (!all) return;
  fn_ = &functions;
  if (Return rc = fn_->init(); rc != kSuccess) {
    const char* text = fn_->error_string(rc);
    why_ = std::string("nvmlInit_v2 failed: ") + (text ? text : "unknown error");
    return;
  }
  initialized_ = true;
}

void Library::shutdown() {
  if (initialized_) fn_->shutdown();
  initialized_ = false;
  why_ = "NVML was shut down";
}

SystemState Library::read() const {
  SystemState state;
  if (!initialized_) return state;
  char text[kTextSize];
  if (fn_->driver_version(text, sizeof text) == kSuccess) state.driver_version = text;
  if (fn_->cuda_driver_version(&state.cuda_driver_version) != kSuccess) state.cuda_driver_version = 0;
  unsigned count = 0;
  if (fn_->count(&count) != kSuccess) return state;
  for (unsigned i = 0; i < count; i++) {
    Device device = nullptr;
    if (fn_->handle_by_index(i, &device) != kSuccess) continue;
    GpuDevice& out = state.devices.emplace_back();
    out.index = i;
    if (fn_->name(device, text, sizeof text) == kSuccess) out.name = text;
    if (fn_->uuid(device, text, sizeof text) == kSuccess) out.uuid = text;
    PciInfo pci{};
    if (fn_->pci_info(device, &pci) == kSuccess) out.pci_bus_id.assign(pci.bus_id, strnlen(pci.bus_id, sizeof pci.bus_id));
    Memory memory{};
    if (fn_->memory_info(device, &memory) == kSuccess) {
      out.memory_known = true;
      out.total = memory.total;
      out.free = memory.free;
    }
    // The list may grow between the two calls: ask again with the room NVML said it needs, a few times.
    std::vector<ProcessInfo> infos;
    unsigned room = 0;
    Return rc = kInsufficientSize;
    for (int attempt = 0; attempt < 4 && rc == kInsufficientSize; attempt++) {
      infos.resize(room);
      rc = fn_->compute_processes(device, &room, infos.data());
      if (rc == kInsufficientSize) room += 4;
    }
    if (rc != kSuccess) continue;
    out.processes_known = true;
    for (unsigned p = 0; p < room && p < infos.size(); p++) {
      GpuProcess& process = out.processes.emplace_back();
      process.pid = infos[p].pid;
      process.bytes = infos[p].used_gpu_memory == kNotAvailable ? 0 : infos[p].used_gpu_memory;
      char name[kProcessNameSize];
      if (fn_->process_name(process.pid, name, sizeof name) == kSuccess) process.command = name;
    }
  }
  return state;
}

}  // namespace gpumemtrace::nvml
