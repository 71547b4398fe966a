#include "analyzer/render/json_sections.h"

namespace gpumemtrace::render {

namespace {

std::string_view verdict_name(report::ForecastVerdict verdict) {
  switch (verdict) {
    case report::ForecastVerdict::TooFewSteps: return "too-few-steps";
    case report::ForecastVerdict::OutOfMemory: return "out-of-memory";
    case report::ForecastVerdict::Growing: return "growing";
    case report::ForecastVerdict::Stable: return "stable";
  }
  return "";
}

std::string_view usable_name(report::UsableFrom from) {
  switch (from) {
    case report::UsableFrom::OutOfMemory: return "out-of-memory";
    case report::UsableFrom::Context: return "context";
    case report::UsableFrom::MemInfo: return "meminfo";
  }
  return "";
}

}  // namespace

void write_forecast(JsonWriter& json, const report::ForecastModel& forecast, const report::Stacks& stacks) {
  json.begin_object("forecast");
  json.optional_string("phase", forecast.phase.value_or(""));
  json.number("min_steps", uint64_t{report::kForecastMinSteps});
  json.begin_array("devices");
  for (const report::DeviceForecastFigures& device : forecast.devices) {
    const report::DeviceForecast& f = device.forecast;
    bool fitted = f.verdict != report::ForecastVerdict::TooFewSteps;
    bool oom = f.verdict == report::ForecastVerdict::OutOfMemory;
    bool stable = f.verdict == report::ForecastVerdict::Stable;
    json.begin_object();
    json.number("device", int64_t{f.device});
    json.string("verdict", verdict_name(f.verdict));
    json.number("steps", f.steps);
    json.number("last_step", f.last_step);
    json.optional_number("fit_first_step", fitted ? std::optional<uint64_t>(f.fit_first) : std::nullopt);
    json.number("step_ns", f.step_ns);
    json.real("bytes_per_step", f.bytes_per_step);
    json.real("bytes_per_step_error", f.slope_error);
    json.real("residual_bytes", f.residual_bytes);
    json.optional_number("last_peak_bytes", fitted ? std::optional<uint64_t>(f.last_peak_bytes) : std::nullopt);
    json.optional_number("usable_bytes", f.usable ? std::optional<uint64_t>(f.usable->bytes) : std::nullopt);
    json.optional_string("usable_from", f.usable ? usable_name(f.usable->from) : "");
    json.optional_number("oom_step", oom ? std::optional<uint64_t>(f.oom_step) : std::nullopt);
    json.optional_number("oom_step_earliest", oom ? std::optional<uint64_t>(f.oom_step_earliest) : std::nullopt);
    json.optional_number("oom_step_latest", oom ? f.oom_step_latest : std::nullopt);
    json.optional_number("oom_in_ns", oom && !f.already_failed() ? std::optional<uint64_t>(f.oom_in_ns) : std::nullopt);
    json.optional_number("stable_after_step", stable ? std::optional<uint64_t>(f.stable_after) : std::nullopt);
    json.optional_number("stable_peak_bytes", stable ? std::optional<uint64_t>(f.stable_peak_bytes) : std::nullopt);
    json.begin_array("stacks");
    for (const report::GrowingStack& stack : device.stacks) {
      json.begin_object();
      json.real("bytes_per_step", stack.bytes_per_step);
      json.number("bytes", stack.bytes);
      write_stack(json, "stack", stacks[stack.stack]);
      json.end_object();
    }
    json.end_array();
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

}  // namespace gpumemtrace::render
