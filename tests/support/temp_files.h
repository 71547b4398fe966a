// Scratch directories and files for tests, under gtest's temporary directory.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpumemtrace::test {

// A new empty directory, removed with everything in it when this goes out of scope.
class ScratchDir {
 public:
  ScratchDir() : path_((std::filesystem::path(testing::TempDir()) / "gpumemtrace-XXXXXX").lexically_normal()) {
    if (!mkdtemp(path_.data())) throw std::runtime_error("mkdtemp failed");
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Writes bytes, then zero_tail zero bytes (how a running writer's reserved space looks).
inline std::string write_file(const std::string& path, const std::vector<uint8_t>& bytes, size_t zero_tail = 0) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  std::vector<char> zeros(zero_tail, 0);
  out.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
  return path;
}

}  // namespace gpumemtrace::test
