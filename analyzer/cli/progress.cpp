#include "analyzer/cli/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>

#include "common/terminal_text.h"

namespace gpumemtrace::cli {

Progress::Progress(std::string path) : path_(std::move(path)), enabled_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { clear(); }

void Progress::clear() {
  if (shown_) fmt::print(stderr, "\r\033[K");
  shown_ = false;
}

void Progress::operator()(std::string_view doing, uint64_t done, uint64_t total) {
  if (!enabled_ || total == 0) return;
  if (done >= total) {  // a report may be printed next
    clear();
    return;
  }
  if (std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
  uint64_t percent = done * 100 / total;
  if (shown_ && percent == percent_ && doing == doing_) return;  // the line would not change
  shown_ = true;
  percent_ = percent;
  doing_ = doing;
  fmt::print(stderr, "\rgpumemtrace: {} {}: {}%\033[K", doing, terminal_text(path_), percent);
  std::fflush(stderr);
}

}  // namespace gpumemtrace::cli
