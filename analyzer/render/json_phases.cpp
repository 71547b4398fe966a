#include "analyzer/render/json_sections.h"

namespace gpumemtrace::render {

void write_phase_instance(JsonWriter& json, const report::PhaseInstanceFigures& f, const report::Stacks& stacks) {
  json.begin_object();
  json.number("number", uint64_t{f.number});
  json.number("thread", uint64_t{f.thread});
  json.number("start_ns", f.start_ns);
  json.number("end_ns", f.end_ns);
  json.boolean("ended", f.ended);
  json.number("live_at_start_bytes", f.live_at_start_bytes);
  json.number("live_at_end_bytes", f.live_at_end_bytes);
  json.number("peak_bytes", f.peak_bytes);
  json.number("peak_time_ns", f.peak_time_ns);
  json.number("allocated_bytes", f.allocated_bytes);
  json.number("allocations", f.allocations);
  json.number("left_live_bytes", f.left_live_bytes);
  json.number("left_live_allocations", f.left_live_allocations);
  if (f.growth_bytes)
    json.number("growth_bytes", *f.growth_bytes);
  else
    json.null("growth_bytes");
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
