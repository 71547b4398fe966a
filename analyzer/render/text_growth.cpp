#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "analyzer/report/stack_text.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

// " (10 equal time slices from the first allocation)", " (the 20 instances of phase forward, in 10 windows)";
// nothing when nothing was allocated.
std::string windows_text(const report::GrowthModel& growth) {
  if (growth.phase)
    return fmt::format(" (the {} instances of phase {}, in {} windows)", growth.instances, terminal_text(*growth.phase),
                       growth.windows);
  return growth.windows ? fmt::format(" ({} equal time slices from the first allocation)", growth.windows) : "";
}

}  // namespace

void append_growth(fmt::memory_buffer& out, const report::GrowthModel& growth, const report::Stacks& stacks,
                   bool detailed) {
  auto o = fmt::appender(out);
  if (growth.sites.empty()) {
    fmt::format_to(o, "growth: no stack's live memory kept rising{}\n\n", windows_text(growth));
    return;
  }
  fmt::format_to(o, "growth: stacks whose live memory kept rising{}:\n", windows_text(growth));
  std::string_view window = growth.phase ? "windows" : "slices";
  for (const report::GrowingSite& g : growth.sites) {
    std::string where = account_name(g.memory, g.device);
    const report::Frames& frames = stacks[g.stack];
    size_t steps = g.floors.size() - 1;
    if (!detailed) {
      fmt::format_to(o, "  +{:<10} rose in {} of {} {}, {}: {}\n", format_size(g.bytes), g.rises, steps, window, where,
                     terminal_text(report::compact_stack(frames)));
      continue;
    }
    fmt::format_to(o, "  +{} on {}, rose in {} of {} {}: {} (from {} to {})\n", format_size(g.bytes), where, g.rises,
                   steps, window, sparkline(g.floors), format_size(g.floors.front()), format_size(g.floors.back()));
    append_stack_lines(out, frames, "      ");
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
