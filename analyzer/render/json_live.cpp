#include "analyzer/render/json_sections.h"
#include "analyzer/render/live_renderers.h"
#include "analyzer/render/renderers.h"

namespace gpumemtrace::render {

namespace {

void write_nvml(JsonWriter& json, const std::vector<replay::NvmlDevice>& devices) {
  json.begin_array("nvml");
  for (const replay::NvmlDevice& device : devices) {
    json.begin_object();
    json.number("index", device.index);
    json.string("moment", format::kDeviceStateMomentNames[static_cast<size_t>(device.moment)]);
    json.number("time_ns", device.time_ns);
    json.number("free_bytes", device.free);
    json.number("total_bytes", device.total);
    json.begin_array("other_processes");
    for (const replay::NvmlProcess& process : device.processes)
      write_other_process(json, process.pid, process.command, process.bytes);
    json.end_array();
    json.end_object();
  }
  json.end_array();
}

void write_instance(JsonWriter& json, std::string_view key, const std::optional<report::PhaseInstanceFigures>& step,
                    const report::Stacks& stacks) {
  if (!step) {
    json.null(key);
    return;
  }
  fmt::memory_buffer instance;
  JsonWriter inner(instance);
  write_phase_instance(inner, *step, stacks);
  json.raw(key, std::string_view(instance.data(), instance.size()));
}

}  // namespace

void render_live_json(const report::LiveView& view, const RenderOptions& options, fmt::memory_buffer& out) {
  fmt::memory_buffer summary;
  render_json(view.summary, options, summary);
  JsonWriter json(out);
  json.begin_object();
  json.raw("summary", std::string_view(summary.data(), summary.size() - 1));  // less its newline
  json.begin_object("live");
  if (view.pid)
    json.number("pid", *view.pid);
  else
    json.null("pid");
  json.boolean("ended", view.ended);
  json.number("time_ns", view.live.time_ns);
  json.optional_string("phase", view.live.phase.value_or(""));
  json.optional_string("step_phase", view.live.step_phase.value_or(""));
  write_instance(json, "step", view.live.step, view.summary.stacks);
  write_instance(json, "last_ended_step", view.live.last_ended, view.summary.stacks);
  write_nvml(json, view.live.nvml);
  json.end_object();
  json.end_object();
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
