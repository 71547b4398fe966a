// The sites whose live memory kept rising (growth.h defines when a site grows).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

struct GrowingSite {
  Memory memory = Memory::Device;
  std::optional<int32_t> device;
  uint64_t bytes = 0;            // the last slice's floor minus the first's
  uint32_t rises = 0;            // steps in which the floor rose
  std::vector<uint64_t> floors;  // per slice: the least the site held
  replay::StackId stack = 0;
};

struct GrowthModel {
  std::vector<GrowingSite> sites;  // most growth first, all memory; at most --top per account, at least --min-size
};

GrowthModel growth_model(ModelInput& input);

}  // namespace gpumemtrace::report
