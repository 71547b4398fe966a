// Durations as people write them ("1.5s", "200ms", "350us", "350µs", "120ns"; a bare number is ns).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpumemtrace {

// Nanoseconds; nullopt for anything else, a negative number or on overflow.
std::optional<uint64_t> parse_duration(std::string_view text);

}  // namespace gpumemtrace
