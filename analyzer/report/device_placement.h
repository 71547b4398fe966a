// Which GPUs a process touched and whether that is the one it should use: the devices it made contexts on
// (Context records) and allocated on, its local rank and CUDA_VISIBLE_DEVICES (Placement record). The verdict
// `wrong-gpu` when a context sits on a device the process never allocates on, or when it allocates on another
// device than its local rank implies. docs/reports.md, "Wrong GPU, shared GPU".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/replay/replay.h"

namespace gpumemtrace::report {

inline constexpr std::string_view kWrongGpuVerdict = "wrong-gpu";

struct DeviceUse {
  int32_t device = 0;                   // the CUDA ordinal
  std::string uuid;                     // empty when no context said
  uint64_t contexts = 0;                // the contexts the trace records on it
  std::optional<uint64_t> context_bytes;  // what they cost, when measured
  uint64_t allocations = 0;             // device allocations on it
};

struct DevicePlacement {
  bool contexts_recorded = false;          // the trace records contexts (a tracer that does, and a context made)
  int64_t local_rank = -1;                 // -1: not set
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES; none: unset or not recorded
  std::vector<DeviceUse> devices;          // by ordinal: those with a context or an allocation
  std::vector<std::string> findings;       // the verdict wrong-gpu when there are some
  std::string remedy;                      // with the findings
  uint64_t end_ns = 0;                     // when the trace ends, on its clock: how long the process held its GPU

  // The UUIDs of the devices it allocates on (known ones).
  std::vector<std::string> allocating_uuids() const;
};

DevicePlacement device_placement(const replay::Replay& replay);

// The remedy of a process on the wrong GPU, and of ranks that share one.
std::string wrong_gpu_remedy();

}  // namespace gpumemtrace::report
