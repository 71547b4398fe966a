// gpumemtrace whatif: a recorded run's PyTorch history (the joined snapshots) replayed through the model of
// PyTorch's caching allocator (analyzer/allocator_model), first under the settings the run recorded, to say how
// close the model came, then under other settings (docs/whatif.md, docs/reports.md "whatif").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/allocator_model/settings.h"
#include "analyzer/report/recorded_history.h"

namespace gpumemtrace::report {

// What the command line asks.
struct WhatifRequest {
  std::vector<std::string> scenarios;  // --set: each "key=value,key=value" is one scenario
  std::vector<uint64_t> memories;      // --memory: the recorded settings on a device of that size
  bool explore = false;                // --explore: the grid of explore_grid()
  std::optional<uint64_t> device_memory;  // --device: the device's memory when the trace does not say it
  std::optional<double> memory_fraction;  // --fraction: the run's per-process memory fraction (not recorded)
};

struct WhatifOutOfMemory {
  uint64_t request = 0;  // the history's requests counted from 0
  uint64_t size = 0;     // bytes asked for
  uint64_t stream = 0;
  std::vector<std::string> stack;  // innermost first, "function (file:line)"; empty when not recorded
  std::optional<uint64_t> time_ns;  // when it was asked for, on the trace's clock (none in a snapshot read alone)
  std::string phase;                // the phase open then ("step/forward #3"; the innermost, on any thread), or ""
};

struct WhatifOutcome {
  std::string name;  // "recorded settings" ("PyTorch defaults" for heap blocks), or the scenario as asked
  bool other_device = false;  // a --memory scenario: the recorded settings on another device, never recommended
  uint64_t peak_reserved = 0;
  uint64_t peak_allocated = 0;
  uint64_t peak_fragmentation = 0;     // the largest reserved - allocated
  uint64_t largest_free_at_worst = 0;  // the largest cached block at the first failure, else at that peak
  uint64_t device_allocs = 0;          // cudaMalloc calls (and mappings, with expandable segments)
  std::optional<WhatifOutOfMemory> out_of_memory;  // the first request that fails on the device
  // The smallest device memory (to 1 MiB, the others' memory included) on which no request fails.
  uint64_t fits_in = 0;
};

// What a device's replay took as its requests.
enum class WhatifInput : uint8_t {
  PytorchHistory,  // the requests of PyTorch's history (the joined snapshots)
  HeapBlocks,      // the blocks a program's own sub-allocator handed out (heap_requests.h)
};

// One device's replays: the device's requests under the recorded settings (PyTorch's defaults for heap blocks), then
// under each scenario.
struct WhatifDevice {
  int32_t device = 0;                      // trace::kNoDevice: heaps whose device was not said
  WhatifInput input = WhatifInput::PytorchHistory;
  std::string input_text;                  // "PyTorch's history", "the blocks handed out by heap 'pool' (annotate.h)"
  uint64_t device_memory = 0;              // 0: unknown (the replays have no limit)
  std::string device_memory_from;          // "an out-of-memory record", "--device", ""
  // The replay under the recorded settings against what the allocator did: PyTorch's segment entries; for heap
  // blocks, only the peak, against the memory of the program's heaps.
  uint64_t requests = 0;
  uint64_t recorded_segment_events = 0;
  uint64_t matched_segment_events = 0;     // before the first difference
  std::string first_difference;            // "recorded ... | model ...", empty when all matched
  std::optional<uint64_t> recorded_peak_reserved;  // nullopt: not known (a heap did not say its memory)
  std::string not_compared;                // why segment events are not compared; empty when they are
  uint64_t empty_caches = 0;               // inferred
  bool initial_state_empty = true;
  std::vector<WhatifOutcome> outcomes;     // [0]: the recorded settings
  // The outcome whose settings fit on the device with the least memory (the first of equals: the recorded
  // settings when nothing does better).
  std::optional<size_t> recommended;
  std::string none_fits_because;           // when none fits: what dominates
};

struct WhatifModel {
  std::string path;
  std::string alloc_conf;                  // PYTORCH_CUDA_ALLOC_CONF as recorded
  std::optional<double> memory_fraction;   // --fraction
  std::vector<WhatifDevice> devices;       // every device with requests, by device
  analysis::PassCounts passes;  // recorded requests, history, and a first reading for the phases of failures
};

// Replays the history of `path` (a trace with its snapshots, or a snapshot; else a trace's heap blocks), each device
// that has requests. Throws WhatifError, and
// allocator_model::SettingsError for a scenario the model does not take.
WhatifModel whatif_report(const std::string& path, const WhatifRequest& request);

// --explore's scenarios.
std::span<const std::string_view> explore_grid();

// "expandable_segments=True,max_split_size_mb=256" over `base`: the options of PYTORCH_CUDA_ALLOC_CONF (key=value
// or key:value), per_process_memory_fraction=F and memory=SIZE (the device's). Throws SettingsError.
allocator_model::Settings apply_scenario(std::string_view scenario, allocator_model::Settings base);

}  // namespace gpumemtrace::report
