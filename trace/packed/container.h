// The layout of a packed trace file after its 16-byte header: the number of streams (a varint), the length of
// each stream's zstd frame (varints), then the frames one after another, in packed_format.h's order.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "trace/packed/packed_format.h"

namespace gpumemtrace::packed {

using Frames = std::array<std::span<const uint8_t>, kStreams>;

// The whole file: header, directory, frames.
std::vector<uint8_t> write_container(const std::array<std::vector<uint8_t>, kStreams>& frames);
// The frames of a file that is_packed(); throws PackedError when the directory does not match the file.
Frames read_container(std::span<const uint8_t> file);

}  // namespace gpumemtrace::packed
