#include <cmath>

#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "analyzer/report/stack_text.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

// 1840 → "1,840".
std::string step_text(uint64_t step) {
  std::string digits = std::to_string(step), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// "120 µs", "850 ms", "12.5 s", "14 min", "3.2 h".
std::string duration_text(uint64_t ns) {
  double seconds = static_cast<double>(ns) / 1e9;
  if (seconds < 1e-3) return fmt::format("{:.0f} µs", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.0f} ms", seconds * 1e3);
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  if (seconds < 3600) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

// "4.00 MiB", "512 B": a rate that may have a fraction of a byte.
std::string rate_text(double bytes) { return format_size(static_cast<uint64_t>(std::llround(std::max(bytes, 0.0)))); }

std::string_view usable_source(report::UsableFrom from) {
  switch (from) {
    case report::UsableFrom::OutOfMemory: return "free and held at its out-of-memory failure";
    case report::UsableFrom::Context: return "free after its first context was made";
    case report::UsableFrom::MemInfo: return "its total (cuMemGetInfo): other processes not known";
  }
  return "";
}

std::string range_text(const report::DeviceForecast& f) {
  if (!f.oom_step_latest) return fmt::format("step {} at the earliest, no latest", step_text(f.oom_step_earliest));
  if (f.oom_step_earliest == *f.oom_step_latest) return "exactly, the peaks lie on a line";
  return fmt::format("steps {} to {}", step_text(f.oom_step_earliest), step_text(*f.oom_step_latest));
}

}  // namespace

void append_forecast(fmt::memory_buffer& out, const report::ForecastModel& forecast, const report::Stacks& stacks) {
  auto o = fmt::appender(out);
  if (forecast.devices.empty()) return;
  if (forecast.phase)
    fmt::format_to(o, "forecast (a step is an instance of phase {}):\n", terminal_text(*forecast.phase));
  else
    fmt::format_to(o, "forecast (a step is a slice of the timeline, {}):\n",
                   duration_text(forecast.devices.front().forecast.step_ns));
  for (const report::DeviceForecastFigures& device : forecast.devices) {
    const report::DeviceForecast& f = device.forecast;
    switch (f.verdict) {
      case report::ForecastVerdict::TooFewSteps:
        fmt::format_to(o, "  device {}: no forecast yet: {} steps ended, it needs {}\n", f.device, f.steps,
                       report::kForecastMinSteps);
        continue;
      case report::ForecastVerdict::Stable:
        fmt::format_to(o, "  device {}: memory is stable after step {}: no step of the {} seen held more than {}\n",
                       f.device, step_text(f.stable_after), step_text(f.steps), format_size(f.stable_peak_bytes));
        continue;
      case report::ForecastVerdict::Growing:
        fmt::format_to(o, "  device {}: its peak grows {} per step (steps {} to {}); its memory is not known, so no "
                          "step is named\n",
                       f.device, rate_text(f.bytes_per_step), step_text(f.fit_first), step_text(f.last_step));
        break;
      case report::ForecastVerdict::OutOfMemory:
        if (f.already_failed()) {
          fmt::format_to(o, "  device {}: it ran out of memory after step {}, and the line of its peaks puts the "
                            "failure at step {} ({}): its peak grew {} per step (steps {} to {}), {} at step {}, of "
                            "{} it could use ({})\n",
                         f.device, step_text(f.last_step), step_text(f.oom_step), range_text(f),
                         rate_text(f.bytes_per_step), step_text(f.fit_first), step_text(f.last_step),
                         format_size(f.last_peak_bytes), step_text(f.last_step), format_size(f.usable->bytes),
                         usable_source(f.usable->from));
          break;
        }
        fmt::format_to(o, "  device {}: at this rate it runs out of memory at step {} ({}; in {}): its peak grows {} "
                          "per step (steps {} to {}), {} at step {}, of {} it can use ({})\n",
                       f.device, step_text(f.oom_step), range_text(f), duration_text(f.oom_in_ns),
                       rate_text(f.bytes_per_step), step_text(f.fit_first), step_text(f.last_step),
                       format_size(f.last_peak_bytes), step_text(f.last_step), format_size(f.usable->bytes),
                       usable_source(f.usable->from));
        break;
    }
    for (const report::GrowingStack& stack : device.stacks)
      fmt::format_to(o, "    keeps {:<10} per step: {}\n", rate_text(stack.bytes_per_step),
                     terminal_text(report::compact_stack(stacks[stack.stack])));
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
