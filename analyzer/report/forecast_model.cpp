#include "analyzer/report/forecast_model.h"

#include <algorithm>

#include "analyzer/report/growth.h"

namespace gpumemtrace::report {

namespace {

// Where each of growth's windows starts: in steps of growth's phase (the instance's index) and in time.
struct WindowStarts {
  std::vector<double> steps;  // empty for time slices
  std::vector<double> ns;
};

WindowStarts window_starts(const replay::Replay& replay, const GrowthWindows& windows, size_t count) {
  WindowStarts out;
  if (const std::optional<replay::PhaseWindowsPlan>& plan = windows.phase) {
    std::vector<uint64_t> starts;
    for (const replay::PhaseInstance& instance : replay.phase_instances().instances())
      if (instance.path == plan->path) starts.push_back(instance.start_ns);
    for (uint64_t group = 0; group < count; ++group) {
      // Window i is in group ⌊groups·i/windows⌋: group g starts at ⌈g·windows/groups⌉.
      uint64_t first = (group * plan->windows + plan->groups - 1) / plan->groups;
      out.steps.push_back(static_cast<double>(first));
      out.ns.push_back(first < starts.size() ? static_cast<double>(starts[first]) : 0);
    }
    return out;
  }
  const replay::TimeSlices& clock = replay.growth_clock();
  uint64_t fine = uint64_t{clock.window()} + 1;
  for (uint64_t group = 0; group < count; ++group)  // as coarse_floors groups the fine slices
    out.ns.push_back(static_cast<double>(group * fine / count * clock.width_ns()));
  return out;
}

// The least-squares slope of the floors over the later half of the windows (the first are the warm-up), per
// unit of `x`.
double floor_slope(const std::vector<uint64_t>& floors, const std::vector<double>& starts) {
  std::vector<long double> x, y;
  for (size_t j = floors.size() / 2; j < floors.size(); ++j) {
    x.push_back(starts[j]);
    y.push_back(floors[j]);
  }
  return static_cast<double>(fit_line(x, y).slope);
}

}  // namespace

ForecastModel forecast_model(ModelInput& input) {
  const replay::Replay& replay = input.reserved_replay();
  const GrowthWindows& windows = input.growth_windows();
  std::optional<replay::PathId> phase;
  if (windows.phase) phase = windows.phase->path;
  ForecastModel model;
  const replay::Replay& growth_replay = input.growth_replay();
  std::vector<Growth> growing = find_growth(growth_replay);
  SiteFilter filter = input.filter(true);
  for (replay::AccountId id : replay.accounts().devices()) {
    const replay::Account& account = replay.accounts()[id];
    if (account.allocations == 0 || (filter.device && account.device != *filter.device)) continue;
    bool by_phase = false;
    std::vector<StepPeak> steps = device_steps(replay, account.device, phase, &by_phase);
    if (by_phase) model.phase = windows.phase_path;
    DeviceForecastFigures& figures = model.devices.emplace_back();
    figures.forecast = forecast_steps(account.device, steps, usable_memory(replay, account.device));
    const DeviceForecast& forecast = figures.forecast;
    if (forecast.verdict != ForecastVerdict::OutOfMemory && forecast.verdict != ForecastVerdict::Growing) continue;
    for (const Growth& growth : growing) {
      const replay::Site& site = growth_replay.sites()[growth.site];
      if (site.category != replay::Category::Device || site.device != account.device || growth.bytes < filter.min_size)
        continue;
      WindowStarts starts = window_starts(growth_replay, windows, growth.floors.size());
      double per_step = by_phase ? floor_slope(growth.floors, starts.steps)
                                 : floor_slope(growth.floors, starts.ns) * static_cast<double>(forecast.step_ns);
      figures.stacks.push_back({per_step, growth.bytes, input.stack(site.stack)});
    }
    std::stable_sort(figures.stacks.begin(), figures.stacks.end(),
                     [](const GrowingStack& a, const GrowingStack& b) { return a.bytes_per_step > b.bytes_per_step; });
    if (figures.stacks.size() > filter.top) figures.stacks.resize(filter.top);
  }
  return model;
}

}  // namespace gpumemtrace::report
