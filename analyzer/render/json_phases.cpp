#include "analyzer/render/json_sections.h"

namespace gpumemtrace::render {

namespace {

void write_figure(JsonWriter& json, std::string_view key, uint32_t value) { json.number(key, uint64_t{value}); }
void write_figure(JsonWriter& json, std::string_view key, uint64_t value) { json.number(key, value); }
void write_figure(JsonWriter& json, std::string_view key, bool value) { json.boolean(key, value); }
void write_figure(JsonWriter& json, std::string_view key, std::optional<int64_t> value) {
  if (value)
    json.number(key, *value);
  else
    json.null(key);
}

}  // namespace

void write_phase_instance(JsonWriter& json, const report::PhaseInstanceFigures& f, const report::Stacks& stacks) {
  json.begin_object();
#define GPUMEMTRACE_FIGURE_JSON(type, member, initial) write_figure(json, #member, f.member);
  GPUMEMTRACE_PHASE_INSTANCE_FIGURES(GPUMEMTRACE_FIGURE_JSON)
#undef GPUMEMTRACE_FIGURE_JSON
  json.begin_array("left_live");
  for (const report::SiteFigures& site : f.left_live) {
    json.begin_object();
    write_device(json, "device", site.device);
    write_site_members(json, site.bytes, site.count, stacks[site.stack]);
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

void write_phases(JsonWriter& json, const report::PhasesModel& phases, const report::Stacks& stacks) {
  json.begin_array("phases");
  for (const report::PhaseFigures& phase : phases.phases) {
    json.begin_object();
    json.string("phase", phase.path);
    json.begin_array("instances");
    for (const report::PhaseInstanceFigures& f : phase.instances) write_phase_instance(json, f, stacks);
    json.end_array();
    json.end_object();
  }
  json.end_array();
  const report::PhaseBalance& balance = phases.balance;
  json.begin_object("phase_balance");
  json.begin_array("unpopped");
  for (const report::UnpoppedPhase& open : balance.unpopped) {
    json.begin_object();
    json.string("name", open.name);
    json.number("thread", uint64_t{open.thread});
    json.number("open_pushes", open.open_pushes);
    json.end_object();
  }
  json.end_array();
  json.number("unpopped_names", balance.unpopped_names);
  json.number("deeper_than_max", balance.deeper_than_max);
  json.number("unmatched_ends", balance.unmatched_ends);
  json.end_object();
}

}  // namespace gpumemtrace::render
