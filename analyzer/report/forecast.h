// The forecast (docs/reports.md, "Forecast"): from the steps seen so far, how a device's peak changes per
// step, and whether and when it reaches the memory the process can use. Steps are the instances of the
// phase growth's windows follow (the most repeated top-level phase), or the timeline's slices of the device
// without one. The fit is a straight line through the peaks of the later half of the steps (the first ones
// are the warm-up); its uncertainty comes from the residuals and the slope's standard error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "analyzer/replay/replay.h"

namespace gpumemtrace::report {

// A straight line through points by least squares: y = mean_y + slope (x - mean_x).
struct LineFit {
  long double mean_x = 0;
  long double mean_y = 0;
  long double slope = 0;
  long double slope_error = 0;  // the slope's standard error
  long double deviation = 0;    // the residuals' standard deviation (n - 2 degrees of freedom)
};
LineFit fit_line(std::span<const long double> x, std::span<const long double> y);

// Fewer steps than this give no forecast: the fit needs half of them after the warm-up.
inline constexpr uint32_t kForecastMinSteps = 8;

// One step: the most the device held while it ran, and when it started and ended.
struct StepPeak {
  uint64_t number = 0;  // 1, 2, ...: the phase instance's number, or the slice's (from 1)
  uint64_t peak_bytes = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// What the process can use of a device: its total less what other processes and the CUDA context held.
enum class UsableFrom : uint8_t {
  OutOfMemory,  // the first out-of-memory failure on it: free + this process's live memory then
  Context,      // NVML's free memory right after the device's first context was made (before any allocation)
  MemInfo,      // the device's total from the program's last cuMemGetInfo (others and the context unknown)
};

struct UsableMemory {
  uint64_t bytes = 0;
  UsableFrom from = UsableFrom::Context;
};

enum class ForecastVerdict : uint8_t {
  TooFewSteps,   // fewer than kForecastMinSteps steps ended
  OutOfMemory,   // the peak grows: the step at which it reaches the usable memory
  Growing,       // the peak grows, but the device's memory is not known
  Stable,        // no growth told from the noise: memory is stable after `stable_after`
};

struct DeviceForecast {
  int32_t device = 0;
  ForecastVerdict verdict = ForecastVerdict::TooFewSteps;
  uint64_t steps = 0;               // steps that ended (a step still running at the end is left out)
  uint64_t last_step = 0;           // the number of the last of them
  uint64_t step_ns = 0;             // the mean duration of a step in the fit
  uint64_t fit_first = 0;           // the steps fitted: fit_first .. last_step
  double bytes_per_step = 0;        // the fitted line's slope
  double slope_error = 0;           // its standard error
  double residual_bytes = 0;        // the residuals' standard deviation
  uint64_t last_peak_bytes = 0;     // the fitted line at the last step
  std::optional<UsableMemory> usable;
  // OutOfMemory: the first step whose peak the line puts above the usable memory, and the range of it when
  // the line is moved by twice the residuals' deviation and its slope by twice its error (none: unbounded).
  uint64_t oom_step = 0;
  uint64_t oom_step_earliest = 0;
  std::optional<uint64_t> oom_step_latest;
  uint64_t oom_in_ns = 0;           // from the end of the last step, at the mean step duration
  uint64_t stable_after = 0;        // Stable: the first step from which no step's peak is exceeded by a later
                                    // one's by more than twice the residuals' deviation
  uint64_t stable_peak_bytes = 0;   // Stable: the most any step from it held

  // OutOfMemory in a trace that ran out on the device: oom_step is the step the line puts its failure in, not
  // one to come.
  bool already_failed() const { return usable && usable->from == UsableFrom::OutOfMemory; }
};

// The steps of a device: the ended instances of `phase` (the process's memory counts, which is the
// device's when it is the only one the process allocated on), else the timeline's slices of the device.
// `phase_used` says which.
std::vector<StepPeak> device_steps(const replay::Replay& replay, int32_t device, std::optional<replay::PathId> phase,
                                   bool* phase_used);

std::optional<UsableMemory> usable_memory(const replay::Replay& replay, int32_t device);

DeviceForecast forecast_steps(int32_t device, const std::vector<StepPeak>& steps, std::optional<UsableMemory> usable);

// The top-level phase path with the most instances, at least 3 (the first entered of equals): the steps of
// the forecast and growth's windows by default.
std::optional<replay::PathId> most_repeated_phase(const replay::Replay& replay);

}  // namespace gpumemtrace::report
