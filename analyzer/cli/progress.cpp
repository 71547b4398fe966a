#include "analyzer/cli/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/terminal_text.h"

namespace gpumemtrace::cli {

Progress::Progress(std::string path) : path_(std::move(path)), enabled_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (shown_) fmt::print(stderr, "\r\033[K");
}

void Progress::operator()(std::string_view doing, uint64_t done, uint64_t total) {
  if (!enabled_ || total == 0) return;
  if (std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
  shown_ = true;
  fmt::print(stderr, "\rgpumemtrace: {} {}: {}%\033[K", doing, terminal_text(path_), std::min<uint64_t>(done, total) * 100 / total);
  std::fflush(stderr);
}

}  // namespace gpumemtrace::cli
