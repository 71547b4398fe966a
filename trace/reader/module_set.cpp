#include "trace/reader/module_set.h"

#include <algorithm>

namespace gpumemtrace::trace {

void ModuleSet::add(ModuleInfo module) {
  auto at = std::upper_bound(modules_.begin(), modules_.end(), module.low,
                             [](uint64_t low, const ModuleInfo& m) { return low < m.low; });
  modules_.insert(at, std::move(module));
}

const ModuleInfo* ModuleSet::find(uint64_t address) const {
  // Ranges of loaded objects do not overlap, so the candidate is the last module starting at or below.
  auto after = std::upper_bound(modules_.begin(), modules_.end(), address,
                                [](uint64_t a, const ModuleInfo& m) { return a < m.low; });
  if (after == modules_.begin()) return nullptr;
  const ModuleInfo& candidate = *(after - 1);
  return candidate.contains(address) ? &candidate : nullptr;
}

}  // namespace gpumemtrace::trace
