// A directory of traces as text: the per-rank table, who stands out, what was left out, then the report
// of the rank shown.
#include "analyzer/render/rank_output.h"
#include "analyzer/render/renderers.h"
#include "analyzer/render/text_parts.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

std::string label(const report::RankRow& row) { return row.rank.empty() ? std::string("-") : terminal_text(row.rank); }

void append_table(fmt::memory_buffer& out, const report::RankBalance& balance) {
  auto o = fmt::appender(out);
  fmt::format_to(o, "{:<10} {:>8} {:>6} {:>10} {:>12} {:>10} {:>5} {:>12} {:>12}\n", "rank", "pid", "device", "peak",
                 "peak at", "leaked", "OOMs", "first OOM", "others then");
  for (const report::RankRow& row : balance.ranks) {
    std::string failed = "-", others = "-";
    if (const auto& oom = row.first_out_of_memory) {
      failed = format_time(balance.common_time(row, oom->time_ns));
      others = oom->others_bytes ? format_size(*oom->others_bytes) : "unknown";
    }
    fmt::format_to(o, "{:<10} {:>8} {:>6} {:>10} {:>12} {:>10} {:>5} {:>12} {:>12}\n", label(row), row.pid, row.device,
                   format_size(row.peak_bytes), format_time(balance.common_time(row, row.peak_time_ns)),
                   format_size(row.leaked_bytes), row.out_of_memory, failed, others);
  }
}

void append_findings(fmt::memory_buffer& out, const report::RankBalance& balance) {
  auto o = fmt::appender(out);
  if (balance.ranks.size() > 1 && balance.largest) {
    const report::RankRow& largest = balance.ranks[*balance.largest];
    fmt::format_to(o, "{} holds the most: peak {}, {:.2f}x the median peak of {}\n", label(largest),
                   format_size(largest.peak_bytes), balance.imbalance, format_size(balance.median_peak_bytes));
  }
  if (!balance.first_failed) {
    fmt::format_to(o, "no rank ran out of memory\n");
    return;
  }
  const report::RankRow& row = balance.ranks[*balance.first_failed];
  const report::OomFigures& oom = *row.first_out_of_memory;
  fmt::format_to(o, "{} ran out of memory first, at {} on device {}: it asked for {}", label(row),
                 format_time(balance.common_time(row, oom.time_ns)), oom.device, format_size(oom.requested_bytes));
  if (oom.total_bytes) fmt::format_to(o, " with {} free of {}", format_size(oom.free_bytes), format_size(oom.total_bytes));
  fmt::format_to(o, "; it held {}", format_size(oom.held_bytes));
  if (oom.others_bytes) fmt::format_to(o, ", other processes {}", format_size(*oom.others_bytes));
  fmt::format_to(o, "\n");
}

std::string_view pick_words(report::RankPick pick) {
  switch (pick) {
    case report::RankPick::LargestPeak: return " (the largest peak; --rank N shows another, --rank all every rank)";
    case report::RankPick::MostLeaked: return " (the most leaked; --rank N shows another, --rank all every rank)";
    case report::RankPick::FirstFailed:
      return " (the first out of memory; --rank N shows another, --rank all every rank)";
    case report::RankPick::Chosen:
    case report::RankPick::All: return "";
  }
  return "";
}

}  // namespace

void text_rank_report(const report::RankReport& model, const RenderOptions& options, fmt::memory_buffer& out) {
  auto o = fmt::appender(out);
  const report::RankBalance& balance = model.balance;
  fmt::format_to(o, "{}: {} {} (times since the first of them started)\n", terminal_text(model.path), balance.ranks.size(),
                 balance.ranks.size() == 1 ? "trace" : "traces");
  append_table(out, balance);
  append_findings(out, balance);
  for (const report::RankRow& row : balance.ranks)
    if (!row.complete)
      fmt::format_to(o, "note: {} ({}) did not end normally: its leaks are not known (counted as 0)\n", label(row),
                     terminal_text(row.source));
  for (const std::string& finding : model.placement_findings)
    fmt::format_to(o, "verdict: {}: {}\n", report::kWrongGpuVerdict, terminal_text(finding));
  if (!model.placement_findings.empty()) fmt::format_to(o, "  remedy: {}\n", model.placement_remedy);
  for (const std::string& trace : model.left_out) fmt::format_to(o, "left out: {} (allocated no device memory)\n", terminal_text(trace));
  for (const report::UnreadableTrace& trace : model.unreadable)
    fmt::format_to(o, "unreadable, left out: {}: {}\n", terminal_text(trace.path), terminal_text(trace.error));
  if (model.details.empty() && model.focus == report::RankFocus::MostLeaked)
    fmt::format_to(o, "no rank leaked device memory\n");
  for (const report::RankDetail& detail : model.details) {
    fmt::format_to(o, "\n=== {}{} ===\n", detail.rank.empty() ? "the trace" : terminal_text(detail.rank), pick_words(detail.pick));
    render_text(detail.report, options, out);
  }
}

}  // namespace gpumemtrace::render
