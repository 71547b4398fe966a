#include "common/time_units.h"

#include <cmath>
#include <string>

#include "common/number_text.h"

namespace gpumemtrace {

std::optional<uint64_t> parse_duration(std::string_view text) {
  std::optional<NumberAndUnit> parts = split_number_and_unit(text);
  if (!parts) return std::nullopt;
  long double scale = 0;
  if (parts->unit.empty() || parts->unit == "ns") scale = 1;
  else if (parts->unit == "us" || parts->unit == "µs") scale = 1e3L;
  else if (parts->unit == "ms") scale = 1e6L;
  else if (parts->unit == "s") scale = 1e9L;
  else return std::nullopt;

  long double value = std::strtold(parts->number.c_str(), nullptr) * scale;
  if (!(value >= 0) || value >= 18446744073709551615.0L) return std::nullopt;
  return static_cast<uint64_t>(std::llround(value));
}

}  // namespace gpumemtrace
