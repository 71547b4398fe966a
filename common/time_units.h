// Durations as people write them ("1.5s", "200ms", "350us", "350µs", "120ns"; a bare number is ns).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpumemtrace {

// Durations in nanoseconds, the unit of every timestamp in a trace.
inline constexpr uint64_t kUs = 1000;

// Nanoseconds; nullopt for anything else, a negative number or on overflow.
std::optional<uint64_t> parse_duration(std::string_view text);

// A wall-clock time as ISO 8601 in UTC: "2026-03-03T15:08:14.612373000Z".
std::string format_wall_time(uint64_t ns_since_epoch);

}  // namespace gpumemtrace
