#include "analyzer/cli/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>

#include "common/terminal_text.h"

namespace gpumemtrace::cli {

Progress::Progress(std::string path) : path_(std::move(path)), enabled_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (shown_) fmt::print(stderr, "\r\033[K");
}

void Progress::operator()(uint64_t offset, uint64_t size) {
  if (!enabled_ || size == 0) return;
  if (std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
  shown_ = true;
  fmt::print(stderr, "\rgpumemtrace: reading {}: {}%", terminal_text(path_), offset * 100 / size);
  std::fflush(stderr);
}

}  // namespace gpumemtrace::cli
