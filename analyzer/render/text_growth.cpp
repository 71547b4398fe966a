#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "analyzer/report/stack_text.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

void append_growth(fmt::memory_buffer& out, const report::GrowthModel& growth, const report::Stacks& stacks,
                   bool detailed) {
  auto o = fmt::appender(out);
  if (growth.sites.empty()) {
    fmt::format_to(o, "growth: no stack's live memory kept rising\n\n");
    return;
  }
  fmt::format_to(o, "growth: stacks whose live memory kept rising ({} equal time slices from the first allocation):\n",
                 growth.sites.front().floors.size());
  for (const report::GrowingSite& g : growth.sites) {
    std::string where = account_name(g.memory, g.device);
    const report::Frames& frames = stacks[g.stack];
    size_t steps = g.floors.size() - 1;
    if (!detailed) {
      fmt::format_to(o, "  +{:<10} rose in {} of {} slices, {}: {}\n", format_size(g.bytes), g.rises, steps, where,
                     report::compact_stack(frames));
      continue;
    }
    fmt::format_to(o, "  +{} on {}, rose in {} of {} slices: {} (from {} to {})\n", format_size(g.bytes), where,
                   g.rises, steps, sparkline(g.floors), format_size(g.floors.front()), format_size(g.floors.back()));
    append_stack_lines(out, frames, "      ");
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
