// Damage to a packed trace's stream, far into it: what the tests of damage found while a trace is unpacked and
// read (tests/trace/packed_trace_test.cpp, tests/analyzer/cli/pack_command_test.cpp) start from.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "trace/packed/container.h"

namespace gpumemtrace::test {

// Flips a bit nine tenths into the free-low stream's frame of the packed trace at `path` (for a trace of random
// frees, one byte per free: several zstd blocks, the last ones damaged). Returns the frame's size.
inline size_t damage_free_low_stream(const std::string& path) {
  std::string text = read_file(path);
  std::vector<uint8_t> packed(text.begin(), text.end());
  std::span<const uint8_t> free_low = packed::read_container(packed)[static_cast<size_t>(packed::Stream::FreeLow)];
  packed[static_cast<size_t>(free_low.data() - packed.data()) + free_low.size() * 9 / 10] ^= 0x10;
  write_file(path, packed);
  return free_low.size();
}

}  // namespace gpumemtrace::test
