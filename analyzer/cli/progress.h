// "gpumemtrace: reading TRACE: 42%" on stderr, when it is a terminal and the work has taken a second; a
// snapshot is also "converting", a trace being packed "packing" and "compressing". The line goes when the
// work is done (told all of it), and at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpumemtrace::cli {

class Progress {
 public:
  explicit Progress(std::string path);
  ~Progress();  // clears the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void operator()(std::string_view doing, uint64_t done, uint64_t total);

 private:
  void clear();

  std::string path_;
  bool enabled_;
  bool shown_ = false;
  std::string doing_;     // what the line shows
  uint64_t percent_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace gpumemtrace::cli
