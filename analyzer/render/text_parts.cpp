#include "analyzer/render/text_parts.h"

#include <algorithm>

#include "analyzer/report/stack_text.h"

namespace gpumemtrace::render {

std::string sparkline(const std::vector<uint64_t>& values) {
  static constexpr std::string_view kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  uint64_t top = std::max<uint64_t>(1, *std::max_element(values.begin(), values.end()));
  std::string out;
  for (uint64_t value : values) out += kBlocks[static_cast<size_t>((value * 7 + top / 2) / top)];
  return out;
}

MostPerSlice most_per_slice(const std::vector<uint64_t>& maxima, size_t width) {
  MostPerSlice series;
  series.merged = std::max<uint64_t>(1, (maxima.size() + width - 1) / width);
  for (size_t i = 0; i < maxima.size(); i += series.merged) {
    size_t end = std::min<size_t>(maxima.size(), i + series.merged);
    series.values.push_back(*std::max_element(maxima.begin() + static_cast<ptrdiff_t>(i),
                                              maxima.begin() + static_cast<ptrdiff_t>(end)));
  }
  return series;
}

std::string counted(uint64_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

std::string format_time(uint64_t ns) {
  if (ns < 1'000'000) return fmt::format("{} µs", ns / 1000);
  if (ns < 1'000'000'000) return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
}

std::string account_name(report::Memory memory, std::optional<int32_t> device) {
  switch (memory) {
    case report::Memory::Managed:
      return "managed memory";
    case report::Memory::HostPinned:
      return "pinned host memory";
    default:
      return device ? fmt::format("device {}", *device) : std::string("device unknown");
  }
}

std::string on_device(std::optional<int32_t> device) { return device ? fmt::format(" on device {}", *device) : ""; }

void append_stack_lines(fmt::memory_buffer& out, std::span<const symbolize::Frame> frames, std::string_view indent) {
  if (frames.empty()) fmt::format_to(fmt::appender(out), "{}(no stack recorded)\n", indent);
  for (const symbolize::Frame& frame : frames)
    fmt::format_to(fmt::appender(out), "{}{}{}\n", indent, terminal_text(report::frame_text(frame)), frame.inlined ? " [inlined]" : "");
}

}  // namespace gpumemtrace::render
