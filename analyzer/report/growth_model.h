// The sites whose live memory kept rising (growth.h defines when a site grows), and the windows judged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

struct GrowingSite {
  Memory memory = Memory::Device;
  std::optional<int32_t> device;
  uint64_t bytes = 0;            // the last window's floor minus the first's
  uint32_t rises = 0;            // steps in which the floor rose
  std::vector<uint64_t> floors;  // per window: the least the site held
  replay::StackId stack = 0;
};

struct GrowthModel {
  std::optional<std::string> phase;  // the windows: groups of this phase's instances; none: equal time slices
  uint32_t instances = 0;            // the phase's instances (those that overlap in time as one)
  uint32_t windows = 0;              // how many windows
  std::vector<GrowingSite> sites;  // most growth first, all memory; at most --top per account, at least --min-size
};

GrowthModel growth_model(ModelInput& input);

}  // namespace gpumemtrace::report
