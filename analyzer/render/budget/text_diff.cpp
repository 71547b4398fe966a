#include "analyzer/render/budget/budget_output.h"
#include "common/size_units.h"
#include "common/terminal_text.h"

namespace gpumemtrace::render {

void text_diff(const report::ProfileDiff& diff, fmt::memory_buffer& out) {
  auto to = fmt::appender(out);
  for (const report::DeviceChange& change : diff.devices) {
    std::string title = fmt::format("device {}", change.device);
    if (!change.rank.empty()) title += " " + terminal_text(change.rank);
    if (!change.in_before) title += " (only in B)";
    if (!change.in_after) title += " (only in A)";
    fmt::format_to(to, "{}\n", title);
    for (auto [name, figure] : {std::pair{"peak", &change.peak}, std::pair{"leaked", &change.leaked},
                                std::pair{"final", &change.final_bytes}})
      fmt::format_to(to, "  {:<7} {:>12} -> {:>12}  {}\n", name, format_size(figure->before), format_size(figure->after),
                     signed_size(figure->delta()));
    auto stacks = [&](const char* heading, const std::vector<report::StackChange>& changes) {
      if (changes.empty()) return;
      fmt::format_to(to, "  {}\n", heading);
      for (const report::StackChange& stack : changes)
        fmt::format_to(to, "    {}  {}\n", signed_size(stack.delta()), terminal_text(stack.stack));
    };
    stacks("grew at the peak:", change.grew);
    stacks("shrank at the peak:", change.shrank);
  }
  for (const std::string& rank : diff.only_before) fmt::format_to(to, "{} is only in A\n", terminal_text(rank));
  for (const std::string& rank : diff.only_after) fmt::format_to(to, "{} is only in B\n", terminal_text(rank));
  if (diff.devices.empty() && diff.only_before.empty() && diff.only_after.empty())
    fmt::format_to(to, "no device memory in either run\n");
}

}  // namespace gpumemtrace::render
