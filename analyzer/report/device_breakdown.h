// Every byte of a device at an out-of-memory failure: its free memory, this process's allocations by owner
// (memory_owners.h), what its pools held unused, its CUDA contexts, the other processes NVML listed, and what is
// left unaccounted. The parts add up to the device's total exactly (unaccounted may be negative: the parts were
// read at slightly different moments). docs/reports.md, "The whole device at a failure".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/replay/replay.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

struct OwnerBytes {
  std::string owner;  // memory_owners.h
  uint64_t bytes = 0;
  bool framework = false;
};

struct DeviceProcessBytes {
  uint64_t pid = 0;
  std::string command;  // NVML's name; empty when NVML would not say
  uint64_t bytes = 0;
};

enum class ContextSource : uint8_t {
  Unknown,          // neither below
  Measured,         // the device's free memory before and after each context (Context records)
  NvmlProcess,      // NVML's memory of this process less what it held
};
std::string_view context_source_name(ContextSource source);  // "unknown", "measured", "nvml-process"

struct DeviceBreakdown {
  uint64_t total_bytes = 0;  // the parts add up to it
  uint64_t free_bytes = 0;
  std::string uuid;          // empty when unknown
  std::vector<OwnerBytes> owners;  // this process's live allocations by owner, largest first
  uint64_t unlisted_bytes = 0;     // live in stacks beyond those the replay kept: not given an owner
  uint64_t pool_unused_bytes = 0;
  ContextSource context_source = ContextSource::Unknown;
  uint64_t context_bytes = 0;      // 0 when unknown
  bool others_known = false;       // NVML listed the device's processes at the failure
  std::vector<DeviceProcessBytes> others;  // largest first
  // NVML's used memory (total - free) that no process it lists holds: processes it cannot name (another PID
  // namespace: a container; this process too when NVML does not list it), or the driver's own.
  uint64_t unlisted_used_bytes = 0;
  int64_t unaccounted_bytes = 0;
  std::vector<std::string> unseen;  // what could not be seen, and where its bytes went

  uint64_t others_bytes() const;  // the other processes' and the unlisted used memory
  uint64_t framework_bytes() const;  // the owners that are a framework's allocator
};

// None when the device's total is unknown (host memory, a snapshot's failure).
std::optional<DeviceBreakdown> device_breakdown(ModelInput& input, const replay::Failure& failure,
                                                uint64_t pool_unused_bytes);

}  // namespace gpumemtrace::report
