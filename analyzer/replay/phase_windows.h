// Growth windows that follow a phase (docs/reports.md, "Growth"): the instances of one phase path, in the
// order they started (instances on several threads that overlap in time are one window), cut into `groups`
// runs of consecutive windows. A site's floor in a group is the least it held while a window of the group
// was open; what it held between windows does not count.
//
// The number of windows comes from a first reading of the trace (PhaseInstances::windows), so the groups
// are known before this one. A site's bytes change only at its events, so its floors are brought up to
// date lazily, at each change: the bytes it held since its last change go to the windows open in the
// meantime. The cost is `groups` floors per site and O(groups) per change at most.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/replay/accounts.h"
#include "analyzer/replay/phases.h"

namespace gpumemtrace::replay {

struct PhaseWindowsPlan {
  PathId path = kNoPhase;
  uint32_t windows = 0;  // the path's windows in the whole trace
  uint32_t groups = 0;   // at most `windows`
};

class PhaseFloors {
 public:
  explicit PhaseFloors(const PhaseWindowsPlan& plan) : plan_(plan) {}

  // A site's bytes change from `held`, when `started` windows have started and one is `open` or not.
  void change(SiteId site, uint64_t held, uint32_t started, bool open);
  // The site's floor in each group, `held` being what it holds at the end of the trace.
  std::vector<uint64_t> floors(SiteId site, uint64_t held, uint32_t started) const;

 private:
  uint32_t group_of(uint32_t window) const {
    uint64_t group = uint64_t{window} * plan_.groups / plan_.windows;
    return static_cast<uint32_t>(group < plan_.groups ? group : plan_.groups - 1);
  }
  // `held` went to windows first .. started - 1.
  void hold(uint64_t* floors, uint32_t first, uint64_t held, uint32_t started) const;

  PhaseWindowsPlan plan_;
  std::vector<uint64_t> floors_;  // groups per site
  std::vector<uint32_t> first_;   // per site: the first window its current bytes were held in
};

}  // namespace gpumemtrace::replay
