// Where things are in the test programs' own sources, so tests name lines by a marker, not a number.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace gpumemtrace::test {

// The number (from 1) of the first line of `path` that holds `text`; 0, and a test failure, if none does.
inline uint32_t line_containing(const std::string& path, const std::string& text) {
  std::ifstream in(path);
  std::string line;
  for (uint32_t number = 1; std::getline(in, line); ++number)
    if (line.find(text) != std::string::npos) return number;
  ADD_FAILURE() << "'" << text << "' is not in " << path;
  return 0;
}

}  // namespace gpumemtrace::test
