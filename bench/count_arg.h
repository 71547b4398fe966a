// Counts on the benchmarks' command lines: digits with an optional K (thousand) or M (million) suffix.
// One parser for bench_runner, the workloads and the trace generator, so "--pairs 1M" means the same
// everywhere and anything else is refused rather than read as a smaller number.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpumemtrace::bench {

inline std::optional<uint64_t> parse_count(std::string_view text) {
  uint64_t scale = 1;
  if (!text.empty() && (text.back() == 'M' || text.back() == 'K')) {
    scale = text.back() == 'M' ? 1'000'000 : 1'000;
    text.remove_suffix(1);
  }
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    if (value > (UINT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > UINT64_MAX / scale) return std::nullopt;
  return value * scale;
}

}  // namespace gpumemtrace::bench
