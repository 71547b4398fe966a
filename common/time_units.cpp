#include "common/time_units.h"

#include <time.h>

#include <cmath>
#include <cstdio>
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

std::string format_wall_time(uint64_t ns_since_epoch) {
  time_t seconds = static_cast<time_t>(ns_since_epoch / 1'000'000'000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%09uZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<unsigned>(ns_since_epoch % 1'000'000'000));
  return text;
}

}  // namespace gpumemtrace
