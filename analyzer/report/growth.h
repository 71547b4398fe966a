// Growth: a stack whose live bytes keep rising from window to window (the instances of a phase when the
// trace has phases, else equal time slices of the trace from its first event), the `total_loss += loss`
// pattern. Each window is judged by the least the stack held during it (its floor), so memory that is
// freed every iteration never looks like growth, however the windows fall.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/replay/replay.h"

namespace gpumemtrace::report {

struct Growth {
  replay::SiteId site = 0;
  uint64_t bytes = 0;        // the last window's floor minus the first window's
  uint32_t rises = 0;        // windows whose floor is above the previous window's
  std::vector<uint64_t> floors;  // per window
};

inline constexpr uint32_t kGrowthWindows = 10;

// The windows growth is judged over: the instances of a phase, in at most kGrowthWindows groups of
// consecutive instances (replay/phase_windows.h), or equal time slices.
struct GrowthWindows {
  std::optional<replay::PhaseWindowsPlan> phase;  // none: equal time slices
  std::string phase_path;                         // "step/forward"
};

// The growing sites, most growth first. A site grows when, over `windows` windows (fewer if the trace is
// shorter; at least 3), its floor never goes down, rises in at least half of the steps between windows,
// and ends higher than it started.
std::vector<Growth> find_growth(const replay::Replay& replay, uint32_t windows = kGrowthWindows);

// The fine windows of the replay merged into `windows` equal ones, each the minimum of its part.
std::vector<uint64_t> coarse_floors(const std::vector<uint64_t>& fine, uint32_t windows);

}  // namespace gpumemtrace::report
