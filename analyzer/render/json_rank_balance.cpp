// The per-rank table as JSON members, shared by the directory reports (json_ranks.cpp) and check's JSON
// (budget/json_check.cpp).
#include "analyzer/render/json_rank_balance.h"

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

}  // namespace gpumemtrace::render
