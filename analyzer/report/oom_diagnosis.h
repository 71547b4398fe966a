// Why an allocation ran out of memory, from the evidence in the trace (docs/reports.md). The checks
// go in this order and the first that holds is the verdict:
//   too large        the request alone is more than the device's total memory;
//   PyTorch's cache  the heaps are PyTorch's segments (a snapshot, or snapshots joined to the trace), their free
//                    blocks (inactive, or pending) would have held the request with the device's free memory;
//                    the remedy follows from where that memory was: in whole idle segments (empty_cache), else
//                    split between tensors (expandable segments, or when they are on already max_split_size_mb);
//   fragmentation    the sub-allocator heaps of the device had free gaps, free + those gaps would have fit
//                    it, but no single gap would have (the request is larger than the largest free block);
//   pool cache       memory pools held unused memory, and free + that unused memory would have fit it;
//   other processes  others held (total - free - what this process held) at least as much as this
//                    process and at least 5% of the device, and free + that would have fit it;
//   growth           a growing stack of the device held at least the shortfall (requested - free);
//   live set         otherwise: this process's own live memory is simply too big.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "analyzer/replay/replay.h"
#include "analyzer/report/growth.h"

namespace gpumemtrace::report {

enum class Verdict : uint8_t { TooLarge, PytorchCache, Fragmentation, PoolCache, OtherProcesses, Growth, LiveSet };

std::string_view verdict_name(Verdict verdict);  // "too-large", "pytorch-cache", "pool-cache", ...

// What to do about PyTorch's cache (a PytorchCache verdict), by where its free memory was.
enum class CacheRemedy : uint8_t {
  EmptyCache,          // whole segments with nothing in them: give them back
  ExpandableSegments,  // split between tensors, expandable segments off (or not said)
  MaxSplitSize,        // split between tensors with expandable segments on
};
std::string_view cache_remedy_name(CacheRemedy remedy);  // "empty-cache", "expandable-segments", "max-split-size"

// PyTorch's caching allocator, when the heaps are its segments.
struct PytorchAllocator {
  std::optional<bool> expandable_segments;  // as its snapshots say (allocator_settings, or mapped segments)
};

struct OomDiagnosis {
  Verdict verdict = Verdict::LiveSet;
  bool device_known = false;    // free and total are known
  uint64_t shortfall_bytes = 0;  // requested - free
  uint64_t pool_reserved_bytes = 0;  // summed over the PoolUsage records of the failure
  uint64_t pool_used_bytes = 0;
  uint64_t pool_unused_bytes = 0;
  uint64_t heap_free_bytes = 0;          // free gaps in the device's heaps (replay::HeapsAtFailure)
  uint64_t heap_largest_free_bytes = 0;  // the largest of them
  std::optional<CacheRemedy> cache_remedy;  // a PytorchCache verdict
  std::optional<bool> expandable_segments;  // PyTorch's, when known
  uint64_t held_bytes = 0;      // this process: its live memory plus what its pools held unused
  uint64_t others_bytes = 0;    // total - free - held, when the device is known
  std::optional<Growth> growth;  // the growing stack behind a Growth verdict
  uint64_t growth_live_bytes = 0;  // what that stack held at the failure
};

// `pytorch`: the heaps are PyTorch's segments.
// `others_listed`: what the other processes NVML listed held (device_breakdown.h); without it, others are the
// device's total less its free memory and what this process held (its contexts among them).
OomDiagnosis diagnose(const replay::Replay& replay, const replay::Failure& failure, const std::vector<Growth>& growth,
                      const std::optional<PytorchAllocator>& pytorch = std::nullopt,
                      std::optional<uint64_t> others_listed = std::nullopt);

}  // namespace gpumemtrace::report
