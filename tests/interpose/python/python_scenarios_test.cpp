// The frame walker inside real interpreters: every installed CPython 3.10-3.14 runs
// scripts/frames_scenarios.py, which calls the probe library (python_stack_probe.cpp) through ctypes with
// the GIL released and asserts on the frames it reports. A version that is not installed is skipped,
// visibly, with where it was looked for.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <tuple>

#include "tests/support/python_interpreters.h"
#include "tests/support/subprocess.h"

namespace gpumemtrace::test {
namespace {

const char* const kScenarios[] = {
    "known_function", "traced",        "method",        "generator",       "async",
    "thread",         "fork_child",    "deep_recursion", "callback",       "unicode",
    "identity",       "native_thread", "finalize_daemon", "bench",         "reborn_code",
};

class PythonScenario : public testing::TestWithParam<std::tuple<unsigned, const char*>> {};

TEST_P(PythonScenario, FramesAreRight) {
  auto [minor, scenario] = GetParam();
  auto interpreter = find_python_interpreter(minor);
  if (!interpreter)
    GTEST_SKIP() << "CPython 3." << minor << " is not installed (looked for " << python_search_places(minor) << ")";
  // -S: no site packages (a sitecustomize must not change the frames); -B: no .pyc next to the script.
  ProcessResult result = run_process({interpreter->executable, "-S", "-B", GMT_PYTHON_SCRIPTS "/frames_scenarios.py",
                                      GMT_PYTHON_PROBE, scenario});
  std::cout << "CPython " << interpreter->version << " (" << interpreter->executable << ")\n" << result.out;
  EXPECT_EQ(result.term_signal, 0) << result.err;
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
}

std::string scenario_name(const testing::TestParamInfo<PythonScenario::ParamType>& info) {
  return "py3_" + std::to_string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Interpreters, PythonScenario,
                         testing::Combine(testing::Values(10u, 11u, 12u, 13u, 14u), testing::ValuesIn(kScenarios)),
                         scenario_name);

}  // namespace
}  // namespace gpumemtrace::test
