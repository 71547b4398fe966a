// Reading what a test program printed.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>

namespace gpumemtrace::test {

// The number after "key " on the first line that starts with it (decimal, or 0x hex).
inline uint64_t printed_value(const std::string& out, const std::string& key) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + " ", 0) == 0) return std::stoull(line.substr(key.size() + 1), nullptr, 0);
  }
  ADD_FAILURE() << "no '" << key << "' in output:\n" << out;
  return 0;
}

}  // namespace gpumemtrace::test
