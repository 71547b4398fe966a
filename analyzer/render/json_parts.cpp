#include "analyzer/render/json_sections.h"
#include "analyzer/report/stack_text.h"

namespace gpumemtrace::render {

namespace {

void write_frame(JsonWriter& json, const symbolize::Frame& frame) {
  json.begin_object();
  if (!frame.function.empty())
    json.string("function", frame.function);
  else if (!frame.module.empty())
    json.string("function", fmt::format("{}+{:#x}", report::basename_of(frame.module), frame.offset));
  else
    json.string("function", fmt::format("{:#x}", frame.offset));
  json.optional_string("file", frame.file);
  json.optional_number("line", frame.file.empty() ? std::nullopt : std::optional<uint64_t>(frame.line));
  json.optional_string("module", frame.module);
  json.string("kind", symbolize::frame_kind_name(frame.kind));
  json.end_object();
}

void write_account_fields(JsonWriter& json, const report::AccountFigures& account) {
#define GPUMEMTRACE_FIGURE_JSON(member, in_json) \
  if (in_json) json.number(#member, account.member);
  GPUMEMTRACE_ACCOUNT_FIGURES(GPUMEMTRACE_FIGURE_JSON)
#undef GPUMEMTRACE_FIGURE_JSON
}

}  // namespace

void write_stack(JsonWriter& json, std::string_view key, std::span<const symbolize::Frame> frames) {
  json.begin_array(key);
  for (const symbolize::Frame& frame : frames) write_frame(json, frame);
  json.end_array();
}

void write_site_members(JsonWriter& json, uint64_t bytes, uint64_t count, std::span<const symbolize::Frame> frames) {
  json.number("bytes", bytes);
  json.number("allocations", count);
  write_stack(json, "stack", frames);
}

void write_device(JsonWriter& json, std::string_view key, std::optional<int32_t> device) {
  if (device)
    json.number(key, int64_t{*device});
  else
    json.null(key);
}

namespace {

void write_history_inconsistencies(JsonWriter& json, const pytorch::HistoryInconsistencies& bad,
                                   uint64_t unknown_actions) {
  json.begin_object("history_inconsistencies");
  json.number("missing_blocks", bad.missing_blocks);
  json.number("duplicate_blocks", bad.duplicate_blocks);
  json.number("missing_segments", bad.missing_segments);
  json.number("orphan_blocks", bad.orphan_blocks);
  json.number("unknown_actions", unknown_actions);
  json.end_object();
}

void write_joined(JsonWriter& json, const sources::JoinInfo& joined) {
  json.begin_object("pytorch_snapshots");
  json.begin_array("joined");
  for (const sources::JoinedSnapshot& snapshot : joined.snapshots) {
    json.begin_object();
    json.string("file", snapshot.named.file);
    json.string("reason", snapshot.named.reason_name());
    json.number("sequence", snapshot.named.sequence);
    json.number("taken_ns", snapshot.named.taken_ns);
    json.number("history_events", snapshot.part.entries);
    json.number("repeated_events", snapshot.part.repeated);
    json.number("untimed_events", snapshot.part.untimed);
    json.optional_number("history_begins_ns", snapshot.part.begins_ns);
    json.number("state_changes", snapshot.state_changes);
    json.end_object();
  }
  json.end_array();
  json.begin_array("unreadable");
  for (const std::string& unreadable : joined.unreadable) json.string({}, unreadable);
  json.end_array();
  json.number("events", joined.events);
  json.optional_number("history_begins_ns", joined.history_begins_ns);
  json.number("segments", joined.segments);
  json.number("missing_segments", joined.missing_segments);
  json.number("missing_segment_bytes", joined.missing_segment_bytes);
  json.number("left_out_blocks", joined.left_out_blocks);
  json.number("other_allocations", joined.other_allocations);
  json.number("other_bytes", joined.other_bytes);
  json.number("unmatched_ooms", joined.unmatched_ooms);
  if (joined.expandable_segments)
    json.boolean("expandable_segments", *joined.expandable_segments);
  else
    json.null("expandable_segments");
  write_history_inconsistencies(json, joined.inconsistencies, 0);
  json.end_object();
}

}  // namespace

void write_trace(JsonWriter& json, const report::TraceHeader& trace) {
  json.begin_object("trace");
  json.string("path", trace.path);
  json.number("pid", trace.pid);
  json.string("command", trace.command);
  json.boolean("complete", trace.complete);
  json.number("events", trace.events);
  if (!trace.params.empty()) {
    json.begin_object("params");
    for (const RunParam& param : trace.params) json.string(param.name, param.value);
    json.end_object();
  }
  if (trace.snapshot) {
    const pytorch::SnapshotInfo& snapshot = *trace.snapshot;
    json.begin_object("snapshot");
    json.boolean("legacy", snapshot.legacy);
    json.number("segments", snapshot.segments);
    json.number("blocks", snapshot.blocks);
    json.number("history_events", snapshot.history_entries);
    json.optional_number("history_start_wall_ns", snapshot.history_timed ? std::optional(snapshot.history_start_wall_ns)
                                                                          : std::nullopt);
    json.optional_number("history_end_wall_ns", snapshot.history_timed ? std::optional(snapshot.history_end_wall_ns)
                                                                        : std::nullopt);
    write_history_inconsistencies(json, snapshot.inconsistencies, snapshot.unknown_actions);
    json.end_object();
  }
  if (trace.joined) write_joined(json, *trace.joined);
  json.end_object();
}

void write_view(JsonWriter& json, const std::optional<report::ReportView>& view) {
  if (view) json.string("view", report::view_name(view->view));
}

void write_accounts(JsonWriter& json, const report::AccountsModel& accounts) {
  json.begin_array("devices");
  for (size_t i = 0; i < accounts.devices.size(); ++i) {
    const report::AccountFigures& account = accounts.devices[i];
    json.begin_object();
    write_device(json, "device", account.device);
    write_account_fields(json, account);
    if (accounts.other_view) {
      const report::AccountFigures& other = accounts.other_devices[i];
      json.begin_object(report::view_name(*accounts.other_view));
      json.number("peak_bytes", other.peak_bytes);
      json.number("peak_time_ns", other.peak_time_ns);
      json.number("final_bytes", other.final_bytes);
      json.end_object();
    }
    json.end_object();
  }
  json.end_array();
  json.begin_object("managed");
  write_account_fields(json, accounts.managed);
  json.end_object();
  json.begin_object("host_pinned");
  write_account_fields(json, accounts.host_pinned);
  json.end_object();
}

}  // namespace gpumemtrace::render
