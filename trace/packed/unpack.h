// Unpacks a packed trace (packed_format.h) into the version-1 bytes it was made from.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "common/progress_fn.h"

namespace gpumemtrace::packed {

// Hands the version-1 trace to `out` in pieces, in order, each ending at a record's end. Throws PackedError when
// the packed bytes are damaged (after some pieces may have been handed out). `progress` is told, with each
// piece, how many compressed bytes of the records' stream it has read and of how many ("unpacking");
// `read_behind`, the parts of `packed` read for good (a mapped file may give their pages back).
void unpack(std::span<const uint8_t> packed, const std::function<void(std::span<const uint8_t>)>& out,
            const ProgressFn& progress = {}, const std::function<void(std::span<const uint8_t>)>& read_behind = {});
std::vector<uint8_t> unpack(std::span<const uint8_t> packed);

// At least the size of the version-1 trace, from the sizes of the records' streams that their frames' headers
// give; none when a header does not give one. Throws PackedError when the directory of streams is damaged.
std::optional<uint64_t> unpacked_size_bound(std::span<const uint8_t> packed);

// The version-1 trace in a memory file (memfd), for a mapping: its descriptor, which the caller closes.
// Throws PackedError when the packed bytes are damaged, std::system_error when memory or the file fails.
int unpack_to_memory_file(std::span<const uint8_t> packed);

}  // namespace gpumemtrace::packed
