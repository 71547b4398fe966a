// NVML (libnvidia-ml.so.1) read at run time: devices, their memory and the processes holding it. Loaded with
// dlopen and used through its public API only; where it is missing or fails to start, the reader says so
// (available() false, why()) and every caller carries on without it. Used by the tracer (device-state records)
// and the analyzer (`gpumemtrace info`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpumemtrace::nvml {

// A process with a compute context on a device, as NVML lists it.
struct GpuProcess {
  uint32_t pid = 0;
  uint64_t bytes = 0;    // its device memory (NVML's usedGpuMemory)
  std::string command;   // nvmlSystemGetProcessName; empty when NVML would not say
};

struct GpuDevice {
  unsigned index = 0;  // NVML's index, not a CUDA ordinal (CUDA_VISIBLE_DEVICES renumbers those)
  std::string name;
  std::string uuid;        // "GPU-..."
  std::string pci_bus_id;  // "00000000:01:00.0"
  bool memory_known = false;
  uint64_t total = 0;
  uint64_t free = 0;
  bool processes_known = false;
  std::vector<GpuProcess> processes;
};

struct SystemState {
  std::string driver_version;   // nvmlSystemGetDriverVersion; empty when unknown
  int cuda_driver_version = 0;  // nvmlSystemGetCudaDriverVersion (13000 = 13.0); 0 when unknown
  std::vector<GpuDevice> devices;
};

// The dlsym to look NVML's functions up with (the tracer passes glibc's own, past its dlsym hook).
using SymbolLookup = void* (*)(void* handle, const char* name);

class Library {
 public:
  // Loads `path` (empty: $GPUMEMTRACE_NVML_LIBRARY, else libnvidia-ml.so.1 from the loader's search path)
  // and calls nvmlInit_v2.
  explicit Library(SymbolLookup lookup = nullptr, std::string path = {});
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  bool available() const { return initialized_; }
  // Why NVML is not available: "libnvidia-ml.so.1 not found", "nvmlInit_v2 failed: Driver Not Loaded", ...
  const std::string& why() const { return why_; }
  // The devices and processes now; empty when not available.
  SystemState read() const;
  // nvmlShutdown (the library stays loaded). The tracer never calls it: the process may still use NVML itself.
  void shutdown();

  struct Functions;

 private:
  const Functions* fn_ = nullptr;
  bool initialized_ = false;
  std::string why_;
};

}  // namespace gpumemtrace::nvml
