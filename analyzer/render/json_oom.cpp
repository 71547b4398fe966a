#include "analyzer/render/json_sections.h"

namespace gpumemtrace::render {

namespace {

void write_breakdown(JsonWriter& json, const std::optional<report::DeviceBreakdown>& breakdown) {
  if (!breakdown) {
    json.null("device_breakdown");
    return;
  }
  const report::DeviceBreakdown& b = *breakdown;
  json.begin_object("device_breakdown");
  json.number("total_bytes", b.total_bytes);
  json.string("uuid", b.uuid);
  json.number("free_bytes", b.free_bytes);
  json.begin_array("owners");
  for (const report::OwnerBytes& owner : b.owners) {
    json.begin_object();
    json.string("owner", owner.owner);
    json.boolean("framework", owner.framework);
    json.number("bytes", owner.bytes);
    json.end_object();
  }
  json.end_array();
  json.number("unlisted_bytes", b.unlisted_bytes);
  json.number("pool_unused_bytes", b.pool_unused_bytes);
  json.string("context_source", report::context_source_name(b.context_source));
  json.number("context_bytes", b.context_bytes);
  json.boolean("others_known", b.others_known);
  json.begin_array("other_processes");
  for (const report::DeviceProcessBytes& process : b.others)
    write_other_process(json, process.pid, process.command, process.bytes);
  json.end_array();
  json.number("unlisted_used_bytes", b.unlisted_used_bytes);
  json.number("unaccounted_bytes", b.unaccounted_bytes);
  json.begin_array("unseen");
  for (const std::string& unseen : b.unseen) json.string({}, unseen);
  json.end_array();
  json.end_object();
}

void write_placement(JsonWriter& json, const report::DevicePlacement& placement) {
  json.begin_object("device_placement");
  json.number("local_rank", placement.local_rank);
  if (placement.visible_devices)
    json.string("cuda_visible_devices", *placement.visible_devices);
  else
    json.null("cuda_visible_devices");
  json.boolean("contexts_recorded", placement.contexts_recorded);
  json.begin_array("devices");
  for (const report::DeviceUse& use : placement.devices) {
    json.begin_object();
    json.number("device", int64_t{use.device});
    json.string("uuid", use.uuid);
    json.number("contexts", use.contexts);
    json.optional_number("context_bytes", use.context_bytes);
    json.number("allocations", use.allocations);
    json.end_object();
  }
  json.end_array();
  if (placement.findings.empty()) json.null("verdict"); else json.string("verdict", report::kWrongGpuVerdict);
  json.begin_array("findings");
  for (const std::string& finding : placement.findings) json.string({}, finding);
  json.end_array();
  json.string("remedy", placement.remedy);
  json.end_object();
}

// What the allocator model says each remedy would have done for the failing request (report/oom_whatif.h).
void write_whatif(JsonWriter& json, const report::OomFailure& failure) {
  if (!failure.whatif) {
    json.null("whatif");
    json.optional_string("whatif_missing", failure.whatif_missing);
    return;
  }
  const report::OomWhatif& w = *failure.whatif;
  json.begin_object("whatif");
  json.number("request", w.request);
  json.number("size_bytes", w.size);
  json.number("device_memory_bytes", w.device_memory);
  json.number("other_memory_bytes", w.other_memory);
  json.begin_array("outcomes");
  for (const report::OomRemedyOutcome& o : w.outcomes) {
    json.begin_object();
    json.string("setting", o.setting);
    json.boolean("fits", !o.fails_at);
    json.optional_number("fails_at_request", o.fails_at);
    json.number("peak_reserved_bytes", o.peak_reserved);
    json.number("live_bytes", o.live_bytes);
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

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
  write_breakdown(json, failure.breakdown);
  write_whatif(json, failure);
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
  if (detailed) write_placement(json, ooms.placement);
}

}  // namespace gpumemtrace::render
