// The CPython interpreters installed on this machine, one per minor version: pyenv's
// ($PYENV_ROOT or ~/.pyenv)/versions/3.<minor>.<patch> (the highest patch), else /usr/bin/python3.<minor>.
#pragma once

#include <optional>
#include <string>

namespace gpumemtrace::test {

struct PythonInterpreter {
  std::string executable;
  std::string version;  // "3.12.1", or "3.12" for a system interpreter
};

std::optional<PythonInterpreter> find_python_interpreter(unsigned minor);

// Where find_python_interpreter looked, for skip messages.
std::string python_search_places(unsigned minor);

}  // namespace gpumemtrace::test
