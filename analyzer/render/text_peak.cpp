#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "analyzer/report/stack_text.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

// "device 1.00 MiB, async-pool 2.00 MiB"
std::string kinds_text(const std::vector<report::KindBytes>& kinds) {
  std::string out;
  for (const report::KindBytes& kind : kinds)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", terminal_text(kind.kind), format_size(kind.bytes));
  return out;
}

}  // namespace

void append_peak(fmt::memory_buffer& out, const report::PeakModel& peak, const report::Stacks& stacks, bool detailed) {
  auto o = fmt::appender(out);
  for (const report::DevicePeak& device : peak.devices) {
    const report::AccountFigures& account = device.account;
    fmt::format_to(o, "peak of {}: {} at {} ({} allocations live", account_name(account),
                   format_size(account.peak_bytes), format_time(account.peak_time_ns), account.peak_count);
    if (detailed) fmt::format_to(o, ": {}", kinds_text(device.kinds));
    fmt::format_to(o, "), the largest stacks then:\n");
    size_t rank = 0;
    for (const report::SiteFigures& site : device.sites) {
      const report::Frames& frames = stacks[site.stack];
      double percent = 100.0 * static_cast<double>(site.bytes) / static_cast<double>(account.peak_bytes);
      if (!detailed) {
        fmt::format_to(o, "  {:>10} {:>5.1f}%  {:>5}×  {}\n", format_size(site.bytes), percent, site.count,
                       terminal_text(report::compact_stack(frames)));
        continue;
      }
      fmt::format_to(o, "  #{} {} ({:.1f}%) in {} allocations\n", ++rank, format_size(site.bytes), percent,
                     site.count);
      append_stack_lines(out, frames, "      ");
    }
    out.push_back('\n');
  }
  if (peak.devices.empty()) fmt::format_to(o, "no device memory was allocated{}\n\n", on_device(peak.device));
}

}  // namespace gpumemtrace::render
