// The devices as NVML shows them, recorded into the trace (DeviceState and DeviceProcess records) before the
// process's first allocation, at each out-of-memory failure and at the end. NVML is loaded by the first of
// these; nothing else calls it, and without it nothing is recorded (the debug log says why).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gpumemtrace/trace_format.h"

namespace gpumemtrace::interpose::nvml_states {

// Called by every allocation hook before the real call: the first one records the start.
void before_allocation();
// After an allocation failed for lack of memory.
void on_out_of_memory();
struct DeviceMemory {
  uint64_t free = 0;
  uint64_t total = 0;
};
// The free and total memory of the device with this UUID now, from NVML; none without NVML or such a device.
std::optional<DeviceMemory> device_memory(const std::string& uuid);
// At the end of the process, before the End record; nothing if the process never allocated.
void at_end();

}  // namespace gpumemtrace::interpose::nvml_states
