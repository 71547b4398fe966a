// "gpumemtrace: reading TRACE: 42%" on stderr, when it is a terminal and reading has taken a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gpumemtrace::cli {

class Progress {
 public:
  explicit Progress(std::string path);
  ~Progress();  // clears the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void operator()(uint64_t offset, uint64_t size);

 private:
  std::string path_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace gpumemtrace::cli
