// The simulated device's configuration (GPUMEMTRACE_SIM_*), read by the simulated driver (libcuda.so.1) and the
// simulated NVML (libnvidia-ml.so.1) alike, so that both describe the same devices. See ../README.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace gpumemtrace::sim {

inline constexpr int kMaxSimDevices = 16;
inline constexpr int kSimDriverVersion = 13000;  // cuDriverGetVersion, nvmlSystemGetCudaDriverVersion

// A process that GPUMEMTRACE_SIM_OTHERS_MEMORY says holds memory on a device.
struct OtherProcess {
  uint32_t pid = 0;
  std::string command;
  uint64_t bytes = 0;
  int device = 0;
};

struct SimConfig {
  int devices = 1;
  uint64_t capacity = 16ull << 30;
  std::vector<uint64_t> others;             // bytes held by other processes, one per device
  std::vector<OtherProcess> other_processes;  // empty in the sizes-only form of GPUMEMTRACE_SIM_OTHERS_MEMORY
  uint64_t context_bytes = 0;  // GPUMEMTRACE_SIM_CONTEXT_MEMORY: what each active context takes from its device
};

// Reads the environment. On a bad value, prints "gpumemtrace simulated <who>: VAR='value' <why>; <consequence>"
// on stderr and returns false.
bool read_sim_config(SimConfig* config, const char* who, const char* consequence);

// A device's UUID: deterministic per ordinal, version-4 shaped; cuDeviceGetUuid and nvmlDeviceGetUUID give it.
std::array<unsigned char, 16> sim_device_uuid(int ordinal);
// Its PCI bus id, device i on bus i+1: "00000000:01:00.0" (NVML's form; CUDA's is "0000:01:00.0").
std::string sim_pci_bus_id(int ordinal);

// GPUMEMTRACE_SIM_STATE_DIR: where each process using the simulated driver publishes its device memory use, for
// the simulated NVML to list it; empty when unset.
std::string sim_state_dir();
// The file of process `pid` in the state directory: kMaxSimDevices little-endian u64, the bytes it uses per device.
std::string sim_state_file(const std::string& dir, long pid);
inline constexpr const char* kSimStatePrefix = "sim-";

}  // namespace gpumemtrace::sim
