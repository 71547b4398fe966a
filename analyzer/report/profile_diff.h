// Two runs compared device by device (`gpumemtrace diff A B`, and `check --baseline`): the change of
// peak, leaked and final bytes, and the stacks whose bytes at the peak grew or shrank most, matched by
// their signature (run_profile.h), like `pprof -diff_base`, never by address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/report/run_profile.h"

namespace gpumemtrace::report {

struct StackChange {
  std::string stack;  // the signature
  uint64_t before_bytes = 0;
  uint64_t after_bytes = 0;
  int64_t delta() const { return signed_change(before_bytes, after_bytes); }
};

// Every stack of either device whose bytes at the peak differ, most grown first (most shrunk last); ties
// by signature. A device absent from a run counts as holding nothing.
std::vector<StackChange> stack_changes(const DeviceProfile* before, const DeviceProfile* after);

struct FigureChange {
  uint64_t before = 0;
  uint64_t after = 0;
  int64_t delta() const { return signed_change(before, after); }
};

struct DeviceChange {
  std::string rank;  // rank_labels(); "" for a lone process
  int32_t device = 0;
  bool in_before = false;  // the device is in A
  bool in_after = false;   // ... in B
  FigureChange peak;
  FigureChange leaked;
  FigureChange final_bytes;
  std::vector<StackChange> grew;    // most grown first, at most `top`
  std::vector<StackChange> shrank;  // most shrunk first, at most `top`
};

struct ProfileDiff {
  std::vector<DeviceChange> devices;  // by rank, then device
  std::vector<std::string> only_before;  // ranks of A that B does not have
  std::vector<std::string> only_after;
};

// Matches the runs' profiles by rank_labels() (a lone profile on each side is matched whatever its rank).
ProfileDiff diff_profiles(std::span<const RunProfile> before, std::span<const RunProfile> after, size_t top);

// The pairs of profiles with the same rank label: (index in before or npos, index in after or npos).
struct RankPair {
  std::string rank;
  size_t before = SIZE_MAX;
  size_t after = SIZE_MAX;
};
std::vector<RankPair> match_ranks(std::span<const RunProfile> before, std::span<const RunProfile> after);

}  // namespace gpumemtrace::report
