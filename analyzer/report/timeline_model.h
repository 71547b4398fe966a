// Live memory of each account over time: the most that was live in each equal slice of time, from the
// first allocation to the end of the trace.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

struct TimelineSeries {
  AccountFigures account;
  std::vector<uint64_t> max_bytes;  // per slice
};

struct TimelineModel {
  bool started = false;   // anything was allocated
  uint64_t start_ns = 0;  // the first allocation
  uint64_t window_ns = 0;  // the width of a slice
  uint64_t end_ns = 0;
  std::vector<TimelineSeries> series;  // the wanted devices, then managed and pinned host memory when used
  std::optional<int32_t> device;       // --device
};

// The accounts a timeline shows: the wanted devices, then managed and pinned host memory when used.
std::vector<replay::AccountId> timeline_accounts(ModelInput& input);
TimelineModel timeline_model(ModelInput& input);

}  // namespace gpumemtrace::report
