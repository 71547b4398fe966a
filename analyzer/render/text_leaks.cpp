#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "analyzer/report/stack_text.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

void append_leaks(fmt::memory_buffer& out, const report::LeaksModel& leaks, const report::Stacks& stacks,
                  bool detailed) {
  auto o = fmt::appender(out);
  if (leaks.sites.empty()) {
    fmt::format_to(o, "{}{}\n\n",
                   leaks.complete ? "no leaks: nothing was live when the process exited"
                                  : "nothing was live when the trace stops",
                   on_device(leaks.device));
    return;
  }
  fmt::format_to(o, "{}: {} in {} allocations\n",
                 leaks.complete ? "leaks (live when the process exited)"
                                : "live when the trace stops (not necessarily leaks: the trace is incomplete)",
                 format_size(leaks.bytes), leaks.count);
  for (const report::SiteFigures& site : leaks.sites) {
    const report::Frames& frames = stacks[site.stack];
    std::string where = account_name(site.memory, site.device);
    if (!detailed) {
      fmt::format_to(o, "  {:>10}  {:>5}×  {:<18} {}\n", format_size(site.bytes), site.count, where,
                     terminal_text(report::compact_stack(frames)));
      continue;
    }
    fmt::format_to(o, "  {} in {} allocations of {}\n", format_size(site.bytes), site.count, where);
    append_stack_lines(out, frames, "      ");
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
