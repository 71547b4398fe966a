// What `gpumemtrace info` shows: the devices NVML sees, the processes holding their memory with what /proc
// says of each (user, command line, parent, CPU time), and the versions of the driver and the CUDA runtime.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/nvml_reader.h"

namespace gpumemtrace::cli {

struct HolderProcess {
  nvml::GpuProcess nvml;          // pid, bytes, NVML's name
  bool visible = false;           // /proc/PID exists here (NVML lists host pids; a container may not see them)
  std::string user;               // the owner of /proc/PID; empty when not visible
  std::string command_line;       // /proc/PID/cmdline, arguments joined by spaces; else NVML's name
  std::optional<long> ppid;
  bool parent_gone = false;       // ppid 1 (adopted by init) or no process ppid
  std::optional<bool> idle;       // no CPU time used over the sampling window; unknown when not visible
  std::string free_command() const { return "kill " + std::to_string(nvml.pid); }
};

struct DeviceInfo {
  nvml::GpuDevice device;
  std::vector<HolderProcess> holders;
};

struct RuntimeVersion {
  std::string library;         // what was loaded
  std::optional<int> version;  // cudaRuntimeGetVersion (13000 = 13.0); none when the library is not found
};

struct InfoReport {
  bool nvml_available = false;
  std::string nvml_unavailable;  // why, when not available
  std::string driver_version;
  int cuda_driver_version = 0;
  RuntimeVersion runtime;
  std::chrono::milliseconds idle_window{0};
  std::vector<DeviceInfo> devices;
};

struct InfoOptions {
  std::string nvml_library;     // empty: the default search (nvml::Library)
  std::string runtime_library;  // libcudart.so.13, or the simulated one's path
  std::chrono::milliseconds idle_window{500};
};

InfoReport gather_info(const InfoOptions& options);

}  // namespace gpumemtrace::cli
