#include "analyzer/cli/device_info.h"

#include <dlfcn.h>
#include <pwd.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

namespace gpumemtrace::cli {

namespace {

std::string proc_path(uint32_t pid, const char* what) { return "/proc/" + std::to_string(pid) + "/" + what; }

bool process_exists(long pid) {
  struct stat st;
  return pid > 0 && stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0;
}

std::string owner_of(uint32_t pid) {
  struct stat st;
  if (stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return {};
  struct passwd entry;
  struct passwd* found = nullptr;
  char buffer[1024];
  if (getpwuid_r(st.st_uid, &entry, buffer, sizeof buffer, &found) == 0 && found) return found->pw_name;
  return std::to_string(st.st_uid);
}

std::string command_line_of(uint32_t pid) {
  std::ifstream in(proc_path(pid, "cmdline"), std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!all.empty() && all.back() == '\0') all.pop_back();
  for (char& c : all)
    if (c == '\0') c = ' ';
  return all;
}

// From /proc/PID/stat: the parent and the CPU time used (user + system, in clock ticks).
struct ProcStat {
  long ppid = 0;
  unsigned long long cpu_ticks = 0;
};
std::optional<ProcStat> stat_of(uint32_t pid) {
  std::ifstream in(proc_path(pid, "stat"));
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  size_t close = line.rfind(')');  // the command may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 2));
  std::string state;
  ProcStat out;
  unsigned long long skip = 0, utime = 0, stime = 0;
  fields >> state >> out.ppid;
  for (int i = 0; i < 9; i++) fields >> skip;  // pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  if (!(fields >> utime >> stime)) return std::nullopt;
  out.cpu_ticks = utime + stime;
  return out;
}

RuntimeVersion runtime_version(const std::string& library) {
  RuntimeVersion out{library, std::nullopt};
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return out;
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(handle, "cudaRuntimeGetVersion"));
  int version = 0;
  if (get && get(&version) == 0) out.version = version;
  return out;
}

}  // namespace

InfoReport gather_info(const InfoOptions& options) {
  InfoReport report;
  report.runtime = runtime_version(options.runtime_library);
  nvml::Library library(nullptr, options.nvml_library);
  report.nvml_available = library.available();
  if (!library.available()) {
    report.nvml_unavailable = library.why();
    return report;
  }
  nvml::SystemState state = library.read();
  library.shutdown();
  report.driver_version = state.driver_version;
  report.cuda_driver_version = state.cuda_driver_version;
  std::map<uint32_t, unsigned long long> first_ticks;  // of every visible holder, for the idle check
  for (nvml::GpuDevice& device : state.devices) {
    DeviceInfo& info = report.devices.emplace_back();
    for (const nvml::GpuProcess& process : device.processes) {
      HolderProcess& holder = info.holders.emplace_back();
      holder.nvml = process;
      holder.visible = process_exists(process.pid);
      holder.command_line = holder.visible ? command_line_of(process.pid) : std::string();
      if (holder.command_line.empty()) holder.command_line = process.command;
      if (!holder.visible) continue;
      holder.user = owner_of(process.pid);
      if (std::optional<ProcStat> st = stat_of(process.pid)) {
        holder.ppid = st->ppid;
        holder.parent_gone = st->ppid == 1 || !process_exists(st->ppid);
        first_ticks.emplace(process.pid, st->cpu_ticks);
      }
    }
    info.device = std::move(device);
  }
  if (first_ticks.empty()) return report;
  report.idle_window = options.idle_window;
  std::this_thread::sleep_for(options.idle_window);
  for (DeviceInfo& info : report.devices)
    for (HolderProcess& holder : info.holders) {
      auto first = first_ticks.find(holder.nvml.pid);
      std::optional<ProcStat> now = first == first_ticks.end() ? std::nullopt : stat_of(holder.nvml.pid);
      if (now) holder.idle = now->cpu_ticks == first->second;
    }
  return report;
}

}  // namespace gpumemtrace::cli
