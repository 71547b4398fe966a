#include "analyzer/replay/phase_windows.h"

#include <algorithm>

namespace gpumemtrace::replay {

void PhaseFloors::hold(uint64_t* floors, uint32_t first, uint64_t held, uint32_t started) const {
  if (plan_.groups == 0 || started == 0 || first >= started) return;
  for (uint32_t group = group_of(first); group <= group_of(started - 1); ++group)
    floors[group] = std::min(floors[group], held);
}

void PhaseFloors::change(SiteId site, uint64_t held, uint32_t started, bool open) {
  if (site >= first_.size()) {  // a new site held nothing until now
    first_.resize(site + 1, 0);
    floors_.resize(first_.size() * plan_.groups, UINT64_MAX);
  }
  hold(&floors_[size_t{site} * plan_.groups], first_[site], held, started);
  first_[site] = open ? started - 1 : started;
}

std::vector<uint64_t> PhaseFloors::floors(SiteId site, uint64_t held, uint32_t started) const {
  if (site >= first_.size()) return std::vector<uint64_t>(plan_.groups, held);
  std::vector<uint64_t> out(floors_.begin() + static_cast<std::ptrdiff_t>(size_t{site} * plan_.groups),
                            floors_.begin() + static_cast<std::ptrdiff_t>(size_t{site + 1} * plan_.groups));
  hold(out.data(), first_[site], held, started);
  return out;
}

}  // namespace gpumemtrace::replay
