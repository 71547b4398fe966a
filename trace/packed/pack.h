// Packs a version-1 trace (packed_format.h): what docs/trace-format.md calls packing, done by `gpumemtrace
// pack` once the trace's process has ended.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/progress_fn.h"
#include "trace/packed/packed_format.h"

namespace gpumemtrace::packed {

inline constexpr int kDefaultLevel = 9;  // zstd's level: docs/benchmarks.md has the sizes and times of 3 and 19

struct PackStats {
  uint64_t plain_bytes = 0;
  uint64_t packed_bytes = 0;
  uint64_t events = 0;
  bool complete = false;  // the trace has its End record
  std::array<uint64_t, kStreams> raw_bytes{};         // each stream before compression
  std::array<uint64_t, kStreams> compressed_bytes{};  // and after
};

// The packed form of a version-1 trace, complete or truncated. Throws trace::OpenError when the bytes are
// not a version-1 trace, PackedError when the trace is corrupt or not as the writer writes it (its
// unpacking would not give back the same bytes). `progress` is told "packing" (bytes of the trace coded, of
// all) and "compressing" (streams compressed, of all).
std::vector<uint8_t> pack(std::span<const uint8_t> plain, int level, PackStats& stats, const ProgressFn& progress = {});

// Replaces the trace file at `path` by its packed form: written to PATH.packing beside it, then renamed over
// it, so the plain trace stays whole until the packed one is. Also throws PackedError for a trace another
// process still writes (it holds the writer's lock) or one already packed, std::system_error when a file
// cannot be read or written.
PackStats pack_file(const std::string& path, int level, const ProgressFn& progress = {});

}  // namespace gpumemtrace::packed
