#include "bench/runner/build_layout.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace gpumemtrace::bench {

BuildLayout this_build() {
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe");
  std::filesystem::path bin = exe.parent_path();
  std::filesystem::path lib = bin.parent_path() / "lib";
  return {bin.string(), lib.string(), (lib / "sim").string(), {}};
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (end > start && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

}  // namespace gpumemtrace::bench
