// Where heaptrack put its trace: it appends .zst (or .gz when zstd is missing) to the name it is given.
#pragma once

#include <filesystem>
#include <string>

namespace gpumemtrace::bench {

// The trace written for `heaptrack -o stem`, or empty if there is none.
inline std::string heaptrack_trace_path(const std::string& stem) {
  for (const char* suffix : {".zst", ".gz"}) {
    if (std::filesystem::exists(stem + suffix)) return stem + suffix;
  }
  return {};
}

}  // namespace gpumemtrace::bench
