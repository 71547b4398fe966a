// A directory of traces as JSON (docs/reports.md, "Many traces at once"): the per-rank table and the
// reports shown, each as its command's --json gives it.
#include "analyzer/render/rank_output.h"
#include "analyzer/render/renderers.h"

namespace gpumemtrace::render {

namespace {

void write_row_label(JsonWriter& json, std::string_view key, const report::RankBalance& balance,
                     std::optional<size_t> row) {
  if (row) write_rank_label(json, key, balance.ranks[*row].rank);
  else json.null(key);
}

void write_rank_row(JsonWriter& json, const report::RankBalance& balance, const report::RankRow& row) {
  write_rank_label(json, "rank", row.rank);
  json.string("trace", row.source);
  json.number("pid", row.pid);
  json.boolean("complete", row.complete);
  json.number("start_wall_ns", row.start_wall_ns);
  json.number("device", int64_t{row.device});
  json.number("peak_bytes", row.peak_bytes);
  json.number("peak_time_ns", row.peak_time_ns);
  json.number("peak_at_ns", balance.common_time(row, row.peak_time_ns));
  json.number("leaked_bytes", row.leaked_bytes);
  json.number("out_of_memory", row.out_of_memory);
  const std::optional<report::OomFigures>& oom = row.first_out_of_memory;
  if (!oom) {
    json.null("first_oom");
    return;
  }
  json.begin_object("first_oom");
  json.number("device", int64_t{oom->device});
  json.number("time_ns", oom->time_ns);
  json.number("at_ns", balance.common_time(row, oom->time_ns));
  json.number("requested_bytes", oom->requested_bytes);
  json.number("free_bytes", oom->free_bytes);
  json.number("total_bytes", oom->total_bytes);
  json.number("held_bytes", oom->held_bytes);
  json.optional_number("others_bytes", oom->others_bytes);
  json.end_object();
}

}  // namespace

void write_rank_label(JsonWriter& json, std::string_view key, const std::string& rank) {
  if (rank.empty()) json.null(key);
  else json.string(key, rank);
}

void write_rank_balance(JsonWriter& json, const report::RankBalance& balance) {
  json.begin_array("ranks");
  for (const report::RankRow& row : balance.ranks) {
    json.begin_object();
    write_rank_row(json, balance, row);
    json.end_object();
  }
  json.end_array();
  if (balance.ranks.empty()) return;
  json.number("start_wall_ns", balance.start_wall_ns);
  write_row_label(json, "largest_rank", balance, balance.largest);
  json.number("median_peak_bytes", balance.median_peak_bytes);
  json.real("imbalance", balance.imbalance);
  write_row_label(json, "first_failed_rank", balance, balance.first_failed);
}

void json_rank_report(const report::RankReport& model, const RenderOptions& options, fmt::memory_buffer& out) {
  {
    JsonObject json(out);
    json.string("directory", model.path);
    write_rank_balance(json, model.balance);
    json.begin_array("placement_findings");
    for (const std::string& finding : model.placement_findings) json.string({}, finding);
    json.end_array();
    json.string("placement_remedy", model.placement_remedy);
    json.begin_array("left_out");
    for (const std::string& trace : model.left_out) json.string({}, trace);
    json.end_array();
    json.begin_array("unreadable");
    for (const report::UnreadableTrace& trace : model.unreadable) {
      json.begin_object();
      json.string("trace", trace.path);
      json.string("error", trace.error);
      json.end_object();
    }
    json.end_array();
    json.begin_array("reports");
    for (const report::RankDetail& detail : model.details) {
      json.begin_object();
      write_rank_label(json, "rank", detail.rank);
      json.string("picked", report::rank_pick_name(detail.pick));
      fmt::memory_buffer report;
      render_json(detail.report, options, report);
      std::string_view text(report.data(), report.size());
      while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
      json.raw("report", text);
      json.end_object();
    }
    json.end_array();
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
