// VMM address ranges with physical memory mapped into them (cuMemMap/cuMemUnmap), sorted by address so
// an unmap finds every mapping inside its range. Mappings are few (a handful per physical allocation),
// so a sorted vector is the right size.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/replay/accounts.h"

namespace gpumemtrace::replay {

class VmmMappings {
 public:
  struct Mapping {
    uint64_t address = 0;
    uint64_t size = 0;
    std::optional<AccountId> account;  // the device of the handle; none when the handle is unknown
    uint64_t handle = 0;
  };

  void map(const Mapping& mapping) {
    auto at = std::lower_bound(mappings_.begin(), mappings_.end(), mapping.address,
                               [](const Mapping& m, uint64_t address) { return m.address < address; });
    mappings_.insert(at, mapping);
  }

  // Calls f(mapping, bytes) for each mapping with `bytes` of it inside [address, address + size).
  template <typename F>
  void overlapping(uint64_t address, uint64_t size, F f) const {
    for (const Mapping& m : mappings_) {  // mappings may be large: one that starts before `address` counts too
      uint64_t from = std::max(m.address, address), to = std::min(m.address + m.size, address + size);
      if (from < to) f(m, to - from);
    }
  }

  // Removes the mappings that start inside [address, address + size); returns how many.
  template <typename OnRemoved>
  size_t unmap(uint64_t address, uint64_t size, OnRemoved on_removed) {
    auto first = std::lower_bound(mappings_.begin(), mappings_.end(), address,
                                  [](const Mapping& m, uint64_t a) { return m.address < a; });
    auto last = first;
    while (last != mappings_.end() && last->address - address < size) on_removed(*last++);
    size_t removed = static_cast<size_t>(last - first);
    mappings_.erase(first, last);
    return removed;
  }

 private:
  std::vector<Mapping> mappings_;
};

}  // namespace gpumemtrace::replay
