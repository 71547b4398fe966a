// The bytes of every site at one moment or over the whole trace, for the outputs that show the whole
// live set rather than the largest stacks (folded stacks, pprof): --what peak, leaked or allocated.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

enum class Weighing : uint8_t {
  Peak,       // live at the peak of its account (each device, managed, pinned host memory)
  Leaked,     // live when the trace (or the --to window) ends: leaks for a complete trace
  Allocated,  // allocated over the whole trace (or window), freed or not
};

// "peak", "leaked", "allocated"
std::string_view weighing_name(Weighing weighing);
std::optional<Weighing> weighing_named(std::string_view name);

struct StackWeightsModel {
  Weighing what = Weighing::Peak;
  std::vector<SiteFigures> sites;  // every site with bytes (or allocations), largest first
};

// Every account and site of the replay: the selection was applied when the trace was read.
StackWeightsModel stack_weights_model(ModelInput& input, Weighing what);

}  // namespace gpumemtrace::report
