// The range of a map of address ranges (keyed by start address) that holds an address.
#pragma once

#include <cstdint>
#include <iterator>

namespace gpumemtrace::pytorch {

// The entry of `ranges` whose [start, start + size_of(value)) holds `address`, or ranges.end().
template <typename Map, typename SizeOf>
auto range_at(Map& ranges, uint64_t address, SizeOf size_of) {
  auto it = ranges.upper_bound(address);
  if (it == ranges.begin()) return ranges.end();
  --it;
  return address - it->first < size_of(it->second) ? it : ranges.end();
}

}  // namespace gpumemtrace::pytorch
