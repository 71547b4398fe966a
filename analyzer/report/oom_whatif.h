// What the allocator model (whatif.md) says other settings would have done for one out-of-memory failure of
// PyTorch's caching allocator: the recorded history replayed up to the request that failed, under the recorded
// settings and under each remedy of oom_remedies(), on the device as the failure saw it (its total memory, and
// what others held then, taken as constant).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/report/recorded_history.h"

namespace gpumemtrace::report {

struct OomRemedyOutcome {
  std::string setting;               // "recorded settings", or the scenario: "expandable_segments=True"
  std::optional<uint64_t> fails_at;  // the first request that ran out of memory, up to the failing one; none: fits
  uint64_t peak_reserved = 0;        // up to and including the failing request
  uint64_t live_bytes = 0;           // the tensors allocated (as rounded) when the failing request came, and it
};

struct OomWhatif {
  uint64_t request = 0;        // the failing request, counted from 0 among the device's requests in the history
  uint64_t size = 0;           // the bytes it asked for
  uint64_t device_memory = 0;  // the device's total
  uint64_t other_memory = 0;   // held by others (and this process outside PyTorch's cache) at the failure
  std::vector<OomRemedyOutcome> outcomes;  // [0]: the recorded settings
};

// The remedies tried, as whatif scenarios: those of whatif --explore that change the recorded settings, but for
// garbage collection (which acts only with a memory fraction, which no snapshot records).
std::vector<std::string_view> oom_remedies();

// The failure on `device` at `time_ns` (the trace's clock): nullopt when the history has no oom entry there.
std::optional<OomWhatif> oom_whatif(const RecordedHistory& history, int32_t device, uint64_t time_ns,
                                    uint64_t device_memory, uint64_t other_memory);

}  // namespace gpumemtrace::report
