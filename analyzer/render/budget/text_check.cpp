#include "analyzer/render/budget/budget_output.h"
#include "common/size_units.h"
#include "common/terminal_text.h"

namespace gpumemtrace::render {

namespace {

std::string where(const report::CheckResult& result) {
  std::string out = result.device ? fmt::format("device {}", *result.device) : "";
  if (!result.rank.empty()) out += (out.empty() ? "" : " ") + result.rank;
  return out;
}

std::string figure(const report::CheckResult& result, uint64_t value) {
  return result.kind == report::CheckKind::MaxOoms ? std::to_string(value) : format_exact_size(value);
}

}  // namespace

std::string signed_size(int64_t bytes) {
  if (bytes == 0) return "0 B";
  uint64_t magnitude = bytes < 0 ? uint64_t(0) - static_cast<uint64_t>(bytes) : static_cast<uint64_t>(bytes);
  char sign = bytes < 0 ? '-' : '+';
  if (magnitude < 1024) return fmt::format("{}{} B", sign, magnitude);
  return fmt::format("{}{} ({}{} B)", sign, format_size(magnitude), sign, magnitude);
}

std::string check_message(const report::CheckResult& result) {
  std::string name(report::check_name(result.kind));
  std::string place = where(result);
  std::string head = place.empty() ? name : name + " " + place;
  if (result.kind == report::CheckKind::BaselineRank) return head + ": in the baseline, but no trace of it was given";
  if (result.kind == report::CheckKind::MaxForecastSteps) {
    if (!result.forecast_oom_step) return head + ": no out-of-memory failure is forecast";
    return fmt::format("{}: out of memory forecast in {} steps (at step {}), {} the limit of {}", head, result.measured,
                       *result.forecast_oom_step, result.passed ? "beyond" : "within", result.limit);
  }
  std::string relation = result.passed ? "<=" : ">";
  if (result.baseline)
    return fmt::format("{}: {} {} baseline {} + tolerance = {}", head, figure(result, result.measured), relation,
                       figure(result, *result.baseline), figure(result, result.limit));
  return fmt::format("{}: {} {} limit {}", head, figure(result, result.measured), relation, figure(result, result.limit));
}

void text_check(const report::CheckModel& model, fmt::memory_buffer& out) {
  auto to = fmt::appender(out);
  for (const report::CheckResult& result : model.results) {
    if (result.passed) continue;
    fmt::format_to(to, "FAIL {}\n", terminal_text(check_message(result)));
    if (!result.stacks.empty()) fmt::format_to(to, "  stacks that grew most at the peak:\n");
    for (const report::StackChange& stack : result.stacks)
      fmt::format_to(to, "    {}  {}\n", signed_size(stack.delta()), terminal_text(stack.stack));
  }
  const report::RankBalance& balance = model.balance;
  if (!balance.ranks.empty()) {
    fmt::format_to(to, "\n{:<10} {:>6} {:>26} {:>26} {:>5}\n", "rank", "device", "peak", "leaked", "OOMs");
    for (const report::RankRow& row : balance.ranks)
      fmt::format_to(to, "{:<10} {:>6} {:>26} {:>26} {:>5}\n", terminal_text(row.rank), row.device, format_exact_size(row.peak_bytes),
                     format_exact_size(row.leaked_bytes), row.out_of_memory);
    if (balance.largest) {
      const report::RankRow& largest = balance.ranks[*balance.largest];
      fmt::format_to(to, "{} holds the most: peak {}, {:.2f}x the median peak of {}\n", terminal_text(largest.rank),
                     format_size(largest.peak_bytes), balance.imbalance, format_size(balance.median_peak_bytes));
    }
  }
  for (const std::string& trace : model.incomplete)
    fmt::format_to(to, "note: {} did not end normally: its leaks are not known (counted as 0)\n", terminal_text(trace));
  size_t failures = model.failures();
  fmt::format_to(to, "{}: {} of {} checks failed ({} {})\n", failures ? "FAILED" : "PASSED", failures,
                 model.results.size(), model.traces, model.traces == 1 ? "trace" : "traces");
}

}  // namespace gpumemtrace::render
