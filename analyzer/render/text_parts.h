// Pieces of the text output that several sections print: times, account names, stacks.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/symbolize/frame.h"
#include "common/terminal_text.h"

namespace gpumemtrace::render {

// "350 µs", "1.235 ms", "12.500 s": a time since the trace started.
std::string format_time(uint64_t ns);

// "1 event", "2 events".
std::string counted(uint64_t count, std::string_view noun);

// "device 0", "managed memory", "pinned host memory".
std::string account_name(report::Memory memory, std::optional<int32_t> device);
inline std::string account_name(const report::AccountFigures& account) {
  return account_name(account.memory, account.device);
}

// " on device N" when --device was given, else "".
std::string on_device(std::optional<int32_t> device);

// "▁▂▄█": each value against the largest (values: not empty).
std::string sparkline(const std::vector<uint64_t>& values);

// A series of per-slice maxima merged into at most `width` slices of `merged` consecutive ones each.
struct MostPerSlice {
  std::vector<uint64_t> values;
  uint64_t merged = 1;
};
MostPerSlice most_per_slice(const std::vector<uint64_t>& maxima, size_t width);

// Every frame on its own line, indented (names escaped: common/terminal_text.h).
void append_stack_lines(fmt::memory_buffer& out, std::span<const symbolize::Frame> frames, std::string_view indent);

}  // namespace gpumemtrace::render
