// The forecast of each device (forecast.h) with its evidence: the stacks that grow, in bytes per step, from
// growth's floors (growth.h), so the report names the line that keeps memory step after step.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/report/forecast.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

struct GrowingStack {
  double bytes_per_step = 0;  // the slope of its floors over the later half of growth's windows, per step
  uint64_t bytes = 0;         // its growth (growth.h): the last window's floor minus the first's
  replay::StackId stack = 0;
};

struct DeviceForecastFigures {
  DeviceForecast forecast;
  std::vector<GrowingStack> stacks;  // OutOfMemory and Growing: most per step first, at most --top
};

struct ForecastModel {
  std::optional<std::string> phase;  // the steps are this phase's instances; none: the timeline's slices
  std::vector<DeviceForecastFigures> devices;  // by device ordinal: those the process allocated on
};

ForecastModel forecast_model(ModelInput& input);

}  // namespace gpumemtrace::report
