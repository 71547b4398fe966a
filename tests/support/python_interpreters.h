// The CPython interpreters installed on this machine, one per minor version: pyenv's
// ($PYENV_ROOT or ~/.pyenv)/versions/3.<minor>.<patch> (the highest patch), else /usr/bin/python3.<minor>.
#pragma once

#include <gtest/gtest.h>

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

// A test run by the CPython 3.<minor> its parameter names; skipped, saying where it was looked for, when that
// version is not installed. A SetUp of its own calls this one first and returns if IsSkipped().
class InstalledPythonTest : public testing::TestWithParam<unsigned> {
 protected:
  void SetUp() override;
  std::optional<PythonInterpreter> interpreter_;
};

// "py3_12": the name of an instance of such a test (INSTANTIATE_TEST_SUITE_P).
std::string python_minor_name(const testing::TestParamInfo<unsigned>& info);

}  // namespace gpumemtrace::test
