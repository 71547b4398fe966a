#include "analyzer/cli/tracer_layout.h"

namespace gpumemtrace::cli {

namespace fs = std::filesystem;

namespace {
// /proc/self/exe is already free of symlinks, so a copied or installed binary finds its own neighbours.
fs::path prefix_dir() { return fs::read_symlink("/proc/self/exe").parent_path().parent_path(); }
}  // namespace

fs::path tracer_library_path() { return prefix_dir() / "lib" / "libgpumemtrace.so"; }

std::vector<fs::path> sim_dir_candidates() {
  fs::path lib = prefix_dir() / "lib";
  return {lib / "sim", lib / "gpumemtrace" / "sim"};
}

std::optional<fs::path> find_sim_dir() {
  for (const fs::path& dir : sim_dir_candidates()) {
    std::error_code error;
    if (fs::is_directory(dir, error)) return dir;
  }
  return std::nullopt;
}

}  // namespace gpumemtrace::cli
