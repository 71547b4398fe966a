// Many ranks at once: per rank its largest device peak and when, its leaks and out-of-memory failures;
// which rank holds more than the others (its peak over the median of all ranks' peaks); which rank ran
// out of memory first, by the wall clock, and what other processes held on its device then.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analyzer/report/run_profile.h"

namespace gpumemtrace::report {

struct RankRow {
  std::string rank;           // rank_labels()
  std::string source;         // the trace
  uint64_t pid = 0;
  bool complete = true;
  uint64_t start_wall_ns = 0;  // when its trace's clock was 0 (0: unknown)
  int32_t device = 0;         // the device of its largest peak
  uint64_t peak_bytes = 0;    // its largest device peak
  uint64_t peak_time_ns = 0;  // when, since its trace started
  uint64_t leaked_bytes = 0;  // over all its devices
  uint64_t out_of_memory = 0;
  std::optional<OomFigures> first_out_of_memory;  // the earliest over its devices
};

struct RankBalance {
  std::vector<RankRow> ranks;        // in the order of the runs given
  uint64_t median_peak_bytes = 0;    // the median of the ranks' peaks (the lower middle one for an even count)
  std::optional<size_t> largest;     // the row with the largest peak (the first of equals)
  double imbalance = 1.0;            // largest peak / median peak (1 when the median is 0)
  std::optional<size_t> first_failed;  // the row whose first out-of-memory failure came first by the wall clock
  uint64_t start_wall_ns = 0;        // the earliest start of the traces (0: no trace knows its start)

  // A time of `row`'s trace (since it started) on the common clock of all rows: since start_wall_ns.
  uint64_t common_time(const RankRow& row, uint64_t time_ns) const;
};

// One row per run (runs: by rank); --device: only that device.
RankBalance rank_balance(std::span<const RunProfile> runs, std::optional<int32_t> device);

}  // namespace gpumemtrace::report
