#include "analyzer/render/json_sections.h"

namespace gpumemtrace::render {

namespace {

// What `oom --json` adds to the contract's keys: the evidence and the live set.
void write_evidence(JsonWriter& json, const report::OomFailure& failure, const report::Stacks& stacks) {
  json.number("held_bytes", failure.held_bytes);
  json.optional_number("others_bytes", failure.others_bytes);
  json.number("pool_reserved_bytes", failure.pool_reserved_bytes);
  json.number("pool_used_bytes", failure.pool_used_bytes);
  json.begin_array("live_set");
  for (const report::LiveSite& site : failure.live_set) {
    json.begin_object();
    write_site_members(json, site.bytes, site.count, stacks[site.stack]);
    json.end_object();
  }
  json.end_array();
}

}  // namespace

void write_ooms(JsonWriter& json, const report::OomModel& ooms, const report::Stacks& stacks, bool detailed) {
  json.begin_array("ooms");
  for (const report::OomFailure& failure : ooms.failures) {
    json.begin_object();
    write_device(json, "device", failure.device);
    json.number("time_ns", failure.time_ns);
    json.number("requested_bytes", failure.requested_bytes);
    json.number("free_bytes", failure.free_bytes);
    json.number("total_bytes", failure.total_bytes);
    json.number("live_bytes", failure.live_bytes);
    json.string("api", failure.api);
    write_stack(json, "stack", stacks[failure.stack]);
    json.string("verdict", report::verdict_name(failure.verdict));
    json.string("finding", failure.finding);
    json.string("remedy", failure.remedy);
    if (detailed) write_evidence(json, failure, stacks);
    json.end_object();
  }
  json.end_array();
}

}  // namespace gpumemtrace::render
