#include <algorithm>

#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

constexpr int kRows = 8;
constexpr size_t kLabelWidth = 11;  // "  1.25 GiB ┤"
constexpr std::string_view kEighths[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

// The slices stretched or squeezed to `columns`, each column the most of the slices it covers.
std::vector<uint64_t> to_columns(const std::vector<uint64_t>& slices, uint32_t columns) {
  std::vector<uint64_t> out(columns, 0);
  for (uint32_t c = 0; c < columns; ++c) {
    size_t begin = c * slices.size() / columns;
    size_t end = std::max(begin + 1, (c + 1) * slices.size() / columns);
    for (size_t w = begin; w < end; ++w) out[c] = std::max(out[c], slices[w]);
  }
  return out;
}

void append_chart(fmt::memory_buffer& out, const std::vector<uint64_t>& columns, uint64_t peak) {
  auto o = fmt::appender(out);
  for (int row = 0; row < kRows; ++row) {
    std::string label = row == 0 ? format_size(peak) : row == kRows - 1 ? std::string("0 B") : std::string();
    fmt::format_to(o, "{:>{}} ┤", label, kLabelWidth - 1);
    for (uint64_t value : columns) {
      // Eighths of a row: the whole chart is kRows * 8 levels high.
      uint64_t level = peak ? (value * kRows * 8 + peak - 1) / peak : 0;
      int64_t here = static_cast<int64_t>(level) - (kRows - 1 - row) * 8;
      out.append(kEighths[std::clamp<int64_t>(here, 0, 8)]);
    }
    out.push_back('\n');
  }
}

}  // namespace

void append_timeline(fmt::memory_buffer& out, const report::TimelineModel& timeline, uint32_t width) {
  auto o = fmt::appender(out);
  if (!timeline.started) {
    fmt::format_to(o, "no memory was allocated\n");
    return;
  }
  uint32_t columns = width - static_cast<uint32_t>(kLabelWidth) - 1;
  if (timeline.series.empty()) fmt::format_to(o, "no memory on device {}\n", timeline.device.value_or(0));
  for (const report::TimelineSeries& series : timeline.series) {
    const report::AccountFigures& account = series.account;
    fmt::format_to(o, "{}: peak {} at {}\n", account_name(account), format_size(account.peak_bytes),
                   format_time(account.peak_time_ns));
    append_chart(out, to_columns(series.max_bytes, columns), account.peak_bytes);
    fmt::format_to(o, "{:>{}} └", "", kLabelWidth - 1);
    for (uint32_t c = 0; c < columns; ++c) out.append(std::string_view("─"));
    std::string from = format_time(timeline.start_ns), to = format_time(timeline.end_ns);
    fmt::format_to(o, "\n{:>{}}  {}{:>{}}\n\n", "", kLabelWidth - 1, from, to,
                   columns > from.size() ? columns - from.size() : 0);
  }
}

}  // namespace gpumemtrace::render
