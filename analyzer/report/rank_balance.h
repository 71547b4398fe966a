// Many ranks at once: per rank its largest device peak, leaks and out-of-memory failures, and which
// rank holds more than the others (its peak over the median of all ranks' peaks).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analyzer/report/run_profile.h"

namespace gpumemtrace::report {

struct RankRow {
  std::string rank;        // rank_labels()
  int32_t device = 0;      // the device of its largest peak
  uint64_t peak_bytes = 0;  // its largest device peak
  uint64_t leaked_bytes = 0;  // over all its devices
  uint64_t out_of_memory = 0;
};

struct RankBalance {
  std::vector<RankRow> ranks;        // in rank order; empty for a single run
  uint64_t median_peak_bytes = 0;    // the median of the ranks' peaks (the lower middle one for an even count)
  std::optional<size_t> largest;     // the row with the largest peak (the first of equals)
  double imbalance = 1.0;            // largest peak / median peak (1 when the median is 0)
};

RankBalance rank_balance(std::span<const RunProfile> runs, std::optional<int32_t> device);

}  // namespace gpumemtrace::report
