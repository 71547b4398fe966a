// What one traced process used on each device, in figures that can be compared from run to run: the
// baseline file stores them, `check` holds them against limits and a baseline, `diff` subtracts them.
// Every figure is exact and independent of timing, so two identical runs give identical profiles.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analyzer/report/stacks.h"
#include "analyzer/analysis/analysis.h"

namespace gpumemtrace::report {

// The bytes one stack held at a device's peak. `stack` is the stack's signature (stack_signature()).
struct StackBytes {
  std::string stack;
  uint64_t bytes = 0;
  uint64_t allocations = 0;
};

// A device's first out-of-memory failure and what held the device then, as the oom report computes it
// (oom_diagnosis.h).
struct OomFigures {
  int32_t device = 0;
  uint64_t time_ns = 0;         // since the trace started
  uint64_t requested_bytes = 0;
  uint64_t free_bytes = 0;      // 0 with total_bytes when unknown
  uint64_t total_bytes = 0;
  uint64_t held_bytes = 0;      // this process: its live memory and what its pools held unused
  std::optional<uint64_t> others_bytes;  // other processes: total - free - held; none when total is unknown
};

struct DeviceProfile {
  int32_t device = 0;
  uint64_t peak_bytes = 0;
  uint64_t peak_time_ns = 0;  // when the peak was first reached; not stored in a baseline (timing)
  uint64_t final_bytes = 0;   // live when the trace ends
  uint64_t leaked_bytes = 0;  // final_bytes of a complete profile, else 0 (docs/reports.md)
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t failed_allocations = 0;
  uint64_t out_of_memory = 0;                // the failures that were out-of-memory errors
  std::optional<uint64_t> growth_bytes;      // Σ growth of its growing sites; from a trace only (it
                                             // depends on timing, so a baseline does not keep it)
  std::vector<StackBytes> stacks_at_peak;    // largest first, then by signature; equal signatures merged
  std::optional<OomFigures> first_out_of_memory;  // not stored in a baseline (timing)
  // The forecast (forecast.h) over the steps of the most repeated top-level phase, else the timeline's slices:
  // the step it runs out of memory at, when it does, and the last step seen. From a trace only.
  std::optional<uint64_t> forecast_oom_step;
  uint64_t forecast_last_step = 0;
};

struct RunProfile {
  std::optional<int64_t> rank;  // from the trace's Process record; none when unknown
  std::string source;           // the trace's path, or the baseline's; not stored in a baseline
  uint64_t pid = 0;             // from the trace; not stored in a baseline
  uint64_t start_wall_ns = 0;   // the trace's start (TraceInfo); not stored in a baseline
  bool complete = true;         // its leaks are known: the trace ended normally, or a window (--to) ended first
  std::vector<DeviceProfile> devices;  // by device ordinal: those that allocated device memory
};

// The key of a stack that survives a rebuild: the frames a person reads (user_frames()), each as
// "function (file)" with the file's base name, "function (module)" without debug information, "? (module)"
// for an unknown function and "qualname (file.py)" for a Python frame; no addresses and no line numbers;
// nothing beyond main (the C library's start-up); joined by " ← ", innermost first.
std::string stack_signature(std::span<const symbolize::Frame> frames);

RunProfile run_profile(const analysis::Analysis& analysis, const SymbolizeStack& symbolize);

// What names each profile in messages and matches it with another run's: "rank 3", or "trace 2" (its
// place among the profiles of unknown rank); "" for a lone profile of unknown rank (a single process).
std::vector<std::string> rank_labels(std::span<const RunProfile> profiles);

// In a set of several traces, a process that allocated no device memory (a launcher, a data loader) is not
// one of the ranks: the commands that read a directory leave it out.
bool left_out_of_set(const RunProfile& profile, size_t traces_in_set);

// The profile of `device`, or nullptr when the run did not allocate on it.
const DeviceProfile* find_device(const RunProfile& profile, int32_t device);

// The order of profiles: by rank, unknown ranks last (in the order given: a stable sort keeps it).
bool rank_order(const RunProfile& a, const RunProfile& b);
// Profiles sorted by rank_order, for stable output and matching.
void sort_by_rank(std::vector<RunProfile>& profiles);

}  // namespace gpumemtrace::report
