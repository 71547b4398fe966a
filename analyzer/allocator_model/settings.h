// The settings of PyTorch's CUDA caching allocator (CUDACachingAllocator.cpp, AllocatorConfig.cpp), as the model
// of allocator.h takes them: the options of PYTORCH_CUDA_ALLOC_CONF (the string a snapshot's allocator_settings
// repeats), the per-process memory fraction and the device's memory. The rules that depend on them only (size
// rounding, the segment a request asks CUDA for) are here too.
//
// Modelled version: PyTorch 2.14.1. Differences from older versions are named where they change a rule.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/size_units.h"

namespace gpumemtrace::allocator_model {

inline constexpr uint64_t kMinBlockSize = 512;        // every request is rounded to at least this
inline constexpr uint64_t kSmallSize = 1 * kMiB;      // the largest request of the small pool
inline constexpr uint64_t kSmallBuffer = 2 * kMiB;    // the small pool's segments (and expandable pages)
inline constexpr uint64_t kMinLargeAlloc = 10 * kMiB; // requests below it share a large_segment_size segment
inline constexpr uint64_t kRoundLarge = 2 * kMiB;     // larger requests get a segment of their size, to 2 MiB
inline constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();
// roundup_power2_divisions has one value per power-of-two interval from 1 MiB to 64 GiB.
inline constexpr size_t kDivisionIntervals = 16;

// A setting PyTorch would refuse, or one the model does not know: what is wrong, in PyTorch's terms.
class SettingsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Settings {
  bool expandable_segments = false;
  uint64_t max_split_size = kUnlimited;  // max_split_size_mb; blocks this large are never split
  // max_non_split_rounding_mb: how much larger than an oversize request a cached block may be. Versions before the
  // option had the limit fixed at 20 MiB (kLargeBuffer), today's default.
  uint64_t max_non_split_rounding_size = 20 * kMiB;
  // large_segment_size_mb: the segment of requests of 1 to 10 MiB and the large pool's expandable page. Older
  // versions have the constant kLargeBuffer, 20 MiB.
  uint64_t large_segment_size = 20 * kMiB;
  double garbage_collection_threshold = 0;  // in (0, 1); 0: off. Acts only with a memory fraction.
  std::array<uint64_t, kDivisionIntervals> roundup_power2_divisions{};  // 0 or 1: round to 512 B only
  // torch.cuda.set_per_process_memory_fraction: the allocator refuses to hold more than fraction x device_memory.
  std::optional<double> per_process_memory_fraction;
  uint64_t device_memory = kUnlimited;  // the device's capacity (what cudaMemGetInfo calls total)
  uint64_t other_memory = 0;            // device memory in use outside the allocator, taken as constant

  bool operator==(const Settings&) const = default;

  // The bytes the allocator may hold (allowed_memory_maximum), when a fraction is set.
  std::optional<uint64_t> allowed_maximum() const;
  // Divisions for a request of `size` bytes: the interval of log2(size) - 20, clamped to the 16 intervals (so a
  // request under 1 MiB takes the 1-2 MiB interval's value).
  uint64_t divisions_for(uint64_t size) const;
};

// Parses PYTORCH_CUDA_ALLOC_CONF's form ("expandable_segments:True,max_split_size_mb:256,
// roundup_power2_divisions:[256:1,512:2,>:4]") over `base`, with PyTorch's checks. Host (pinned_*) options and
// release_lock_on_cudamalloc change nothing the model computes and are accepted. Throws SettingsError.
Settings parse_alloc_conf(std::string_view conf, Settings base = {});

// The request as the allocator rounds it (round_size).
uint64_t round_size(const Settings& settings, uint64_t size);
// The segment a rounded request asks CUDA for when no cached block fits (get_allocation_size).
uint64_t segment_size(const Settings& settings, uint64_t rounded);
// Whether a rounded request goes to the small pool.
inline bool small_pool(uint64_t rounded) { return rounded <= kSmallSize; }

}  // namespace gpumemtrace::allocator_model
