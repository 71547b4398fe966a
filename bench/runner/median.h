// The median of repeated measurements: robust against the odd run disturbed by other work on the machine.
#pragma once

#include <algorithm>
#include <vector>

namespace gpumemtrace::bench {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace gpumemtrace::bench
