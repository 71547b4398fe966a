// Each out-of-memory failure: the request, the device's memory then, what held it, the verdict with its
// finding and remedy (oom_diagnosis.h, oom_explanation.h), and the live set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/report/device_breakdown.h"
#include "analyzer/report/device_placement.h"
#include "analyzer/report/model_input.h"
#include "analyzer/report/oom_diagnosis.h"
#include "analyzer/report/oom_whatif.h"

namespace gpumemtrace::report {

struct PoolFigures {
  uint64_t pool = 0;
  uint64_t reserved_bytes = 0;
  uint64_t used_bytes = 0;
};

struct LiveSite {
  uint64_t bytes = 0;
  uint64_t count = 0;
  replay::StackId stack = 0;
};

struct OomFailure {
  std::optional<int32_t> device;  // none: host memory
  uint64_t time_ns = 0;
  std::string api;                // the API the program called
  std::string error;              // "CUDA_ERROR_OUT_OF_MEMORY"
  uint64_t requested_bytes = 0;
  uint64_t free_bytes = 0;        // 0 with total_bytes when unknown
  uint64_t total_bytes = 0;
  uint64_t live_bytes = 0;        // this process's memory of the device then
  uint64_t live_count = 0;
  replay::StackId stack = 0;

  Verdict verdict = Verdict::LiveSet;
  std::string finding;
  std::string remedy;
  uint64_t held_bytes = 0;                // live + what this process's pools held unused
  std::optional<uint64_t> others_bytes;   // none when the device's total is unknown; NVML's list when it has one
  uint64_t pool_reserved_bytes = 0;
  uint64_t pool_used_bytes = 0;
  uint64_t pool_unused_bytes = 0;
  std::vector<PoolFigures> pools;         // the pools reported with the failure
  std::optional<replay::HeapsAtFailure> heaps;  // the heaps it could have come from, when there are some
  bool heaps_are_pytorch = false;               // they are PyTorch's segments
  std::optional<CacheRemedy> cache_remedy;      // a PytorchCache verdict
  std::optional<DeviceBreakdown> breakdown;     // every byte of the device; none when its total is unknown
  // A pytorch-cache or fragmentation verdict with PyTorch's history joined: what the allocator model says other
  // settings would have done for this request (oom_whatif.h); else, for such a verdict, why there is none.
  std::optional<OomWhatif> whatif;
  std::string whatif_missing;

  bool has_detail = false;         // the replay kept the live set (the first failures only)
  std::vector<LiveSite> live_set;  // largest first, at least --min-size
};

struct OomModel {
  std::vector<OomFailure> failures;      // out of memory, on the wanted memory, in trace order
  size_t top = 10;                       // the text lists this many live stacks per failure (the summary: failures)
  uint64_t other_failures = 0;           // allocations that failed for other reasons
  uint64_t failures_without_detail = 0;  // failures beyond those the replay kept
  DevicePlacement placement;             // the devices the process touched: the verdict wrong-gpu
};

OomModel oom_model(ModelInput& input);

}  // namespace gpumemtrace::report
