// The pytest plugin (python/gpumemtrace/pytest_plugin.py): pytest runs budget_cases.py under the tracer on
// the simulated device, and the tests over their GPU memory budget fail with the figures to the byte and
// the stacks; without the tracer the marked tests are skipped, or fail with --gpumemtrace-require.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

bool have_pytest() {
  return !std::string(GMT_PYTHON3).empty() && run_process({GMT_PYTHON3, "-c", "import pytest"}).exit_code == 0;
}

// pytest on a copy of budget_cases.py in a scratch directory (no cache or bytecode in the sources).
class PytestPlugin : public testing::Test {
 protected:
  void SetUp() override {
    if (!have_pytest()) GTEST_SKIP() << "pytest is missing for " << GMT_PYTHON3 << " (Debian python3-pytest; scripts/setup.sh installs it)";
    std::filesystem::copy_file(BUDGET_CASES, scratch_ / "budget_cases.py");
  }
  std::vector<std::string> pytest_arguments(std::vector<std::string> extra = {}) {
    // The scratch directory is the root whatever configuration lies above it (a pytest.ini or setup.py in
    // /tmp once made the test ids gpumemtrace-XXXXXX/budget_cases.py::...).
    std::vector<std::string> args = {"-m", "pytest", "-p", "gpumemtrace.pytest_plugin", "-p", "no:cacheprovider",
                                     "-c", "/dev/null", "--rootdir", scratch_.path(), "-rA",
                                     scratch_ / "budget_cases.py"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  EnvChanges environment() { return {{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}, {"PYTHONDONTWRITEBYTECODE", "1"}}; }
  ScratchDir scratch_;
};

TEST_F(PytestPlugin, TheTestOverItsBudgetFailsWithTheExactExcessAndItsStack) {
  TracedRun run = run_traced(GMT_PYTHON3, pytest_arguments(), environment());
  EXPECT_EQ(run.result.exit_code, 1) << run.result.out << run.result.err;  // pytest: some tests failed
  const std::string& out = run.result.out;
  for (const char* passed : {"test_within_budget", "test_without_budget"})
    EXPECT_TRUE(std::regex_search(out, std::regex(std::string("\nPASSED \\S*budget_cases.py::") + passed + "\n"))) << out;
  for (const char* failed : {"test_over_budget", "test_leaves_memory_allocated", "test_with_a_bad_budget"})
    EXPECT_TRUE(std::regex_search(out, std::regex(std::string("\nFAILED \\S*budget_cases.py::") + failed + "\n"))) << out;
  EXPECT_NE(out.find("= 3 failed, 2 passed in "), std::string::npos) << out;

  // 8 MiB + 4096 B against 8 MiB: over by exactly 4096 bytes, with the stacks that held it, each up to the test.
  EXPECT_NE(out.find("_\nGPU memory over budget (gpumemtrace, trace " + run.trace + "):\n"
                     "max-peak device 0: 8.00 MiB (8392704 B) > limit 8.00 MiB (8388608 B)\n"
                     "the largest stacks at that peak:\n"
                     "  #1 8.00 MiB (100.0%) in 1 allocations\n"
                     "      budget_cases.py:17 in malloc\n"
                     "      budget_cases.py:35 in test_over_budget\n"
                     "  #2 4.00 KiB (0.0%) in 1 allocations\n"
                     "      budget_cases.py:17 in malloc\n"
                     "      budget_cases.py:36 in test_over_budget\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("_\nGPU memory over budget (gpumemtrace, trace " + run.trace + "):\n"
                     "max-leak device 0: 1.00 MiB (1048576 B) > limit 0 B\n"
                     "the stacks of what it still held at its end:\n"
                     "  1.00 MiB in 1 allocations of device 0\n"
                     "      budget_cases.py:17 in malloc\n"
                     "      budget_cases.py:43 in test_leaves_memory_allocated\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("pytest_pyfunc_call"), std::string::npos) << "pytest's frames are left out: " << out;
  // A budget that cannot be checked never passes.
  EXPECT_NE(out.find("_\ngpumemtrace could not check the GPU memory budget of budget_cases.py::test_with_a_bad_budget: "
                     "gpumemtrace check: --max-peak lots is not a size (e.g. 512MiB, 6GiB, 1.5GB, 4096) (see gpumemtrace "
                     "check --help)\n"),
            std::string::npos)
      << out;
}

TEST_F(PytestPlugin, WithoutTheTracerTheBudgetsAreSkippedWithTheReasonOrFailWhenRequired) {
  ProcessResult plain = run_process([&] {
    std::vector<std::string> command = pytest_arguments();
    command.insert(command.begin(), GMT_PYTHON3);
    return command;
  }(), sim_env(environment()));
  EXPECT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  EXPECT_NE(plain.out.find("1 passed, 4 skipped"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find(": gpumemtrace: the tracer is not loaded, so the GPU memory budget cannot be checked: run "
                           "pytest under it (gpumemtrace run -- python -m pytest -p gpumemtrace.pytest_plugin ...)\n"),
            std::string::npos)
      << plain.out;

  std::vector<std::string> command = pytest_arguments({"--gpumemtrace-require"});
  command.insert(command.begin(), GMT_PYTHON3);
  ProcessResult required = run_process(command, sim_env(environment()));
  EXPECT_EQ(required.exit_code, 1) << required.out << required.err;
  EXPECT_NE(required.out.find("4 errors"), std::string::npos) << required.out;
}

}  // namespace
}  // namespace gpumemtrace::test
