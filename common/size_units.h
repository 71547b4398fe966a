// Byte sizes as people write them ("16GiB", "512M", "1.5 GiB", "4096") and as we print them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpumemtrace {

inline constexpr uint64_t kKiB = uint64_t{1} << 10;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// Binary units (K = KiB = 1024); a bare number is bytes. nullopt for anything else or on overflow.
std::optional<uint64_t> parse_size(std::string_view text);

// "0 B", "512 B", "1.50 KiB", "16.00 GiB": three significant decimals at most, binary units.
std::string format_size(uint64_t bytes);
// "34.0 MiB (35651584 B)": format_size and, from 1 KiB on, the exact bytes (a limit, a verdict's evidence).
std::string format_exact_size(uint64_t bytes);

}  // namespace gpumemtrace
