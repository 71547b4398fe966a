#include "analyzer/report/growth.h"

#include <algorithm>

namespace gpumemtrace::report {

std::vector<uint64_t> coarse_floors(const std::vector<uint64_t>& fine, uint32_t windows) {
  size_t n = std::min<size_t>(windows, fine.size());
  std::vector<uint64_t> out(n);
  for (size_t j = 0; j < n; ++j) {
    size_t begin = j * fine.size() / n, end = (j + 1) * fine.size() / n;
    out[j] = *std::min_element(fine.begin() + static_cast<std::ptrdiff_t>(begin),
                               fine.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return out;
}

std::vector<Growth> find_growth(const replay::Replay& replay, uint32_t windows) {
  std::vector<Growth> out;
  if (!replay.growth_clock().started()) return out;
  for (replay::SiteId id = 0; id < replay.sites().size(); ++id) {
    if (replay.sites()[id].allocations < 2) continue;  // one allocation is a step, not growth
    std::vector<uint64_t> floors = coarse_floors(replay.growth_floors(id), windows);
    if (floors.size() < 3 || floors.back() <= floors.front()) continue;
    uint32_t rises = 0;
    bool falls = false;
    for (size_t j = 1; j < floors.size(); ++j) {
      rises += floors[j] > floors[j - 1];
      falls |= floors[j] < floors[j - 1];
    }
    size_t steps = floors.size() - 1;
    if (falls || rises * 2 < steps) continue;
    out.push_back(Growth{id, floors.back() - floors.front(), rises, std::move(floors)});
  }
  std::sort(out.begin(), out.end(), [](const Growth& a, const Growth& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site;
  });
  return out;
}

}  // namespace gpumemtrace::report
