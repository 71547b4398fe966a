#include "common/size_units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/number_text.h"

namespace gpumemtrace {

std::optional<uint64_t> parse_size(std::string_view text) {
  std::optional<NumberAndUnit> parts = split_number_and_unit(text);
  if (!parts) return std::nullopt;
  const std::string& number = parts->number;
  std::string_view unit = parts->unit;

  std::string lower;
  for (char c : unit) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.ends_with("ib")) lower.resize(lower.size() - 2);
  else if (lower.size() == 2 && lower[1] == 'b') lower.resize(1);
  else if (lower == "b" || lower == "bytes") lower.clear();

  int shift = 0;
  if (lower.empty()) shift = 0;
  else if (lower == "k") shift = 10;
  else if (lower == "m") shift = 20;
  else if (lower == "g") shift = 30;
  else if (lower == "t") shift = 40;
  else return std::nullopt;

  if (!parts->fractional) {
    uint64_t value = 0;
    for (char c : number) {
      uint64_t digit = static_cast<uint64_t>(c - '0');
      if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
      value = value * 10 + digit;
    }
    if (shift && value > (std::numeric_limits<uint64_t>::max() >> shift)) return std::nullopt;
    return value << shift;
  }
  long double value = std::strtold(number.c_str(), nullptr) * std::ldexp(1.0L, shift);
  if (!(value >= 0) || value >= 18446744073709551615.0L) return std::nullopt;
  return static_cast<uint64_t>(std::llround(value));
}

std::string format_size(uint64_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  int unit = 0;
  long double value = static_cast<long double>(bytes);
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  char out[32];
  std::snprintf(out, sizeof out, value >= 100 ? "%.0Lf %s" : value >= 10 ? "%.1Lf %s" : "%.2Lf %s", value,
                units[unit]);
  return out;
}

std::string format_exact_size(uint64_t bytes) {
  return bytes < 1024 ? format_size(bytes) : format_size(bytes) + " (" + std::to_string(bytes) + " B)";
}

}  // namespace gpumemtrace
