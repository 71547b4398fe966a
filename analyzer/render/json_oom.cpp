#include "analyzer/render/json_sections.h"

namespace gpumemtrace::render {

namespace {

// What `oom --json` adds to the contract's keys: the evidence and the live set.
void write_evidence(JsonWriter& json, const report::OomFailure& failure, const report::Stacks& stacks) {
  json.number("held_bytes", failure.held_bytes);
  json.optional_number("others_bytes", failure.others_bytes);
  json.number("pool_reserved_bytes", failure.pool_reserved_bytes);
  json.number("pool_used_bytes", failure.pool_used_bytes);
  if (failure.heaps) {
    const replay::HeapsAtFailure& heaps = *failure.heaps;
    json.begin_object("heaps");
    json.boolean("pytorch", failure.heaps_are_pytorch);
    json.number("heaps", uint64_t{heaps.heaps});
    json.number("reserved_bytes", heaps.reserved_bytes);
    json.number("allocated_bytes", heaps.allocated_bytes);
    json.number("free_bytes", heaps.free_bytes);
    json.number("free_blocks", heaps.free_blocks);
    json.number("largest_free_block_bytes", heaps.largest_free_bytes);
    json.number("pending_free_bytes", heaps.pending_bytes);
    json.number("idle_heaps", uint64_t{heaps.idle_heaps});
    json.number("idle_bytes", heaps.idle_bytes);
    json.end_object();
  } else {
    json.null("heaps");
  }
  if (failure.cache_remedy)
    json.string("cache_remedy", report::cache_remedy_name(*failure.cache_remedy));
  else
    json.null("cache_remedy");
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
