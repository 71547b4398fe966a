// Unpacks a packed trace (packed_format.h) into the version-1 bytes it was made from.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace gpumemtrace::packed {

// Hands the version-1 trace to `out` in pieces, in order. Throws PackedError when the packed bytes are damaged
// (after some pieces may have been handed out).
void unpack(std::span<const uint8_t> packed, const std::function<void(std::span<const uint8_t>)>& out);
std::vector<uint8_t> unpack(std::span<const uint8_t> packed);

// The version-1 trace in a memory file (memfd), for a mapping: its descriptor, which the caller closes.
// Throws PackedError when the packed bytes are damaged, std::system_error when memory or the file fails.
int unpack_to_memory_file(std::span<const uint8_t> packed);

}  // namespace gpumemtrace::packed
