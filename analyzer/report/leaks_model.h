// What was live when the trace ends, by site: leaks for a complete trace, else only what was live when
// the trace stops.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

struct LeaksModel {
  bool complete = false;           // the process exited normally: what was live are leaks
  uint64_t bytes = 0;              // live at the end, over the wanted memory
  uint64_t count = 0;
  std::vector<SiteFigures> sites;  // largest first, all memory; at most --top per account, at least --min-size
  std::optional<int32_t> device;   // --device
};

LeaksModel leaks_model(ModelInput& input);

}  // namespace gpumemtrace::report
