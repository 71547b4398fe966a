#include "tests/support/python_interpreters.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace gpumemtrace::test {

namespace {

std::string pyenv_root() {
  if (const char* root = std::getenv("PYENV_ROOT"); root && *root) return root;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.pyenv";
  return "/root/.pyenv";
}

bool executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// "3.12.1" → 1 for minor 12; -1 for anything else ("3.12.1t", "3.12-dev", "3.120.1").
int patch_of(const std::string& name, unsigned minor) {
  std::string prefix = "3." + std::to_string(minor) + ".";
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() == prefix.size()) return -1;
  int patch = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    patch = patch * 10 + (name[i] - '0');
  }
  return patch;
}

}  // namespace

std::optional<PythonInterpreter> find_python_interpreter(unsigned minor) {
  std::string binary = "python3." + std::to_string(minor);
  std::error_code error;
  std::filesystem::path versions = pyenv_root() + "/versions";
  int best_patch = -1;
  PythonInterpreter best;
  for (const auto& entry : std::filesystem::directory_iterator(versions, error)) {
    std::string name = entry.path().filename().string();
    int patch = patch_of(name, minor);
    std::string path = (entry.path() / "bin" / binary).string();
    if (patch > best_patch && executable(path)) {
      best_patch = patch;
      best = PythonInterpreter{path, name};
    }
  }
  if (best_patch >= 0) return best;
  for (const char* dir : {"/usr/bin/", "/usr/local/bin/"}) {
    std::string path = dir + binary;
    if (executable(path)) return PythonInterpreter{path, "3." + std::to_string(minor)};
  }
  return std::nullopt;
}

std::string python_search_places(unsigned minor) {
  std::string m = std::to_string(minor);
  return pyenv_root() + "/versions/3." + m + ".*/bin/python3." + m + ", /usr/bin/python3." + m +
         ", /usr/local/bin/python3." + m;
}

void InstalledPythonTest::SetUp() {
  interpreter_ = find_python_interpreter(GetParam());
  if (!interpreter_)
    GTEST_SKIP() << "CPython 3." << GetParam() << " is not installed (looked for " << python_search_places(GetParam())
                 << ")";
}

std::string python_minor_name(const testing::TestParamInfo<unsigned>& info) {
  return "py3_" + std::to_string(info.param);
}

}  // namespace gpumemtrace::test
