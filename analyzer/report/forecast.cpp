#include "analyzer/report/forecast.h"

#include <algorithm>
#include <cmath>

namespace gpumemtrace::report {

namespace {

size_t devices_allocated_on(const replay::Replay& replay) {
  size_t count = 0;
  for (replay::AccountId id : replay.accounts().devices()) count += replay.accounts()[id].allocations > 0;
  return count;
}

// The first whole step after the line ȳ + slope (x - x̄) + lift has gone above `usable`; none when it never does.
std::optional<uint64_t> crossing(long double usable, long double mean_x, long double mean_y, long double slope,
                                 long double lift, uint64_t last_step) {
  if (slope <= 0) return std::nullopt;
  long double x = (usable - mean_y - lift) / slope + mean_x;
  if (std::fabs(x - std::round(x)) < 1e-6L) x = std::round(x);  // exactly at a step: that step still fits
  if (x >= 1e18L) return std::nullopt;
  long double step = std::floor(x) + 1;
  return std::max<uint64_t>(last_step + 1, step < 1 ? 1 : static_cast<uint64_t>(step));
}

}  // namespace

LineFit fit_line(std::span<const long double> x, std::span<const long double> y) {
  LineFit fit;
  auto n = static_cast<long double>(x.size());
  if (x.empty()) return fit;
  for (size_t i = 0; i < x.size(); ++i) {
    fit.mean_x += x[i];
    fit.mean_y += y[i];
  }
  fit.mean_x /= n;
  fit.mean_y /= n;
  long double sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - fit.mean_x) * (x[i] - fit.mean_x);
    sxy += (x[i] - fit.mean_x) * (y[i] - fit.mean_y);
  }
  if (sxx <= 0) return fit;
  fit.slope = sxy / sxx;
  if (x.size() < 3) return fit;
  long double squares = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    long double residual = y[i] - (fit.mean_y + fit.slope * (x[i] - fit.mean_x));
    squares += residual * residual;
  }
  fit.deviation = std::sqrt(squares / (n - 2));
  fit.slope_error = fit.deviation / std::sqrt(sxx);
  return fit;
}

std::optional<replay::PathId> most_repeated_phase(const replay::Replay& replay) {
  const replay::PhaseTracker& phases = replay.phases();
  const replay::PhaseInstances& instances = replay.phase_instances();
  std::optional<replay::PathId> chosen;
  for (replay::PathId path = 1; path < phases.path_count(); ++path)
    if (phases.parent(path) == replay::kNoPhase && instances.windows(path) >= 3 &&
        (!chosen || instances.windows(path) > instances.windows(*chosen)))
      chosen = path;
  return chosen;
}

std::vector<StepPeak> device_steps(const replay::Replay& replay, int32_t device, std::optional<replay::PathId> phase,
                                   bool* phase_used) {
  std::vector<StepPeak> steps;
  *phase_used = phase && devices_allocated_on(replay) <= 1;
  if (*phase_used) {
    for (const replay::PhaseInstance& instance : replay.phase_instances().instances())
      if (instance.path == *phase && !instance.open)
        steps.push_back({instance.number, instance.peak_bytes, instance.start_ns, instance.end_ns});
    return steps;
  }
  const replay::Account* account = replay.accounts().find_device(device);
  const replay::TimeSlices& clock = replay.timeline_clock();
  if (account == nullptr || !clock.started()) return steps;
  std::vector<uint64_t> slices = account->timeline.windows(clock.window());
  slices.pop_back();  // the slice the trace ends in is not over
  for (size_t i = 0; i < slices.size(); ++i) {
    uint64_t start = clock.origin_ns() + i * clock.width_ns();
    steps.push_back({i + 1, slices[i], start, start + clock.width_ns()});
  }
  return steps;
}

std::optional<UsableMemory> usable_memory(const replay::Replay& replay, int32_t device) {
  for (const replay::Failure& failure : replay.failures())
    if (failure.out_of_memory() && failure.device == device && failure.device_total > 0)
      return UsableMemory{failure.device_free + failure.live_bytes, UsableFrom::OutOfMemory};
  for (const replay::ContextMade& context : replay.device_facts().contexts())
    if (context.device == device && context.total > 0) return UsableMemory{context.free_after, UsableFrom::Context};
  const replay::Account* account = replay.accounts().find_device(device);
  if (account != nullptr && account->meminfo_total > 0) return UsableMemory{account->meminfo_total, UsableFrom::MemInfo};
  return std::nullopt;
}

DeviceForecast forecast_steps(int32_t device, const std::vector<StepPeak>& steps, std::optional<UsableMemory> usable) {
  DeviceForecast out;
  out.device = device;
  out.usable = usable;
  out.steps = steps.size();
  if (steps.empty()) return out;
  out.last_step = steps.back().number;
  if (steps.size() < kForecastMinSteps) return out;

  // Least squares over the later half of the steps.
  size_t first = steps.size() / 2;
  std::vector<long double> x, y;
  for (size_t i = first; i < steps.size(); ++i) {
    x.push_back(steps[i].number);
    y.push_back(steps[i].peak_bytes);
  }
  LineFit fit = fit_line(x, y);
  auto n = static_cast<long double>(x.size());
  long double mean_x = fit.mean_x, mean_y = fit.mean_y, slope = fit.slope;
  long double deviation = fit.deviation, slope_error = fit.slope_error;
  // Residuals below a byte are the arithmetic's: the peaks lie on the line.
  if (deviation < 0.5L) deviation = slope_error = 0;

  out.fit_first = steps[first].number;
  out.bytes_per_step = static_cast<double>(slope);
  out.slope_error = static_cast<double>(slope_error);
  out.residual_bytes = static_cast<double>(deviation);
  long double at_last = mean_y + slope * (out.last_step - mean_x);
  out.last_peak_bytes = at_last > 0 ? static_cast<uint64_t>(std::llround(at_last)) : 0;
  uint64_t span_ns = steps.back().end_ns - steps[first].start_ns;
  out.step_ns = static_cast<uint64_t>(span_ns / n);

  if (slope >= 0.5L && slope - 2 * slope_error > 0) {
    if (!usable) {
      out.verdict = ForecastVerdict::Growing;
      return out;
    }
    auto memory = static_cast<long double>(usable->bytes);
    out.verdict = ForecastVerdict::OutOfMemory;
    out.oom_step = *crossing(memory, mean_x, mean_y, slope, 0, out.last_step);
    out.oom_step_earliest =
        *crossing(memory, mean_x, mean_y, slope + 2 * slope_error, 2 * deviation, out.last_step);
    out.oom_step_latest = crossing(memory, mean_x, mean_y, slope - 2 * slope_error, -2 * deviation, out.last_step);
    out.oom_in_ns = (out.oom_step - out.last_step) * out.step_ns;
    return out;
  }
  out.verdict = ForecastVerdict::Stable;
  // The first step from which no step's peak is exceeded by a later one's by more than twice the residuals'
  // deviation.
  auto tolerance = static_cast<uint64_t>(2 * deviation);
  uint64_t later_max = 0;
  size_t stable = steps.size() - 1;
  for (size_t i = steps.size(); i-- > 0;) {
    if (steps[i].peak_bytes + tolerance >= later_max) stable = i;
    else break;
    later_max = std::max(later_max, steps[i].peak_bytes);
  }
  out.stable_after = steps[stable].number;
  out.stable_peak_bytes = later_max;
  return out;
}

}  // namespace gpumemtrace::report
