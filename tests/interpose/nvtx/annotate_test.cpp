// include/gpumemtrace/annotate.h and the Python module gpumemtrace: phases recorded under the tracer on the
// simulated device, and nothing changed without it.
#include <gtest/gtest.h>

#include "tests/interpose/nvtx/phase_paths.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

TEST(Annotate, PhasesFromC) {
  TracedRun run = run_traced("capture_prog_annotate");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  Phased phased = read_phases(run.trace);
  std::map<uint64_t, std::string> expected = {{301, "load"}, {302, "load/decode"}, {303, "load"}, {304, ""}};
  EXPECT_EQ(phased.path_by_size, expected);
  EXPECT_EQ(phased.phase_records, 4u);
  EXPECT_EQ(phased.unmatched, 0u);
}

TEST(Annotate, WithoutTheTracerCNothingChanges) {
  ProcessResult traced = run_traced("capture_prog_annotate").result;
  ProcessResult plain = run_process({bin_dir() + "/capture_prog_annotate"}, sim_env());
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, traced.out);
  EXPECT_EQ(plain.out, "done 4\n");
  EXPECT_EQ(plain.err, "");
}

std::vector<std::string> python_command() {
  return {GMT_PYTHON3, GMT_ANNOTATE_SCRIPT, sim_dir() + "/libcudart.so.13"};
}

TEST(Annotate, PhasesFromPython) {
  if (std::string(GMT_PYTHON3).empty()) GTEST_SKIP() << "no /usr/bin/python3";
  std::vector<std::string> command = python_command();
  TracedRun run = run_traced(command[0], {command.begin() + 1, command.end()}, {{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.out, "active\ndone 4\n");
  Phased phased = read_phases(run.trace);
  std::map<uint64_t, std::string> expected = {{401, "train"}, {402, "train/validation"}, {403, "train"}, {404, ""}};
  EXPECT_EQ(phased.path_by_size, expected);
  EXPECT_EQ(phased.unmatched, 0u);
}

TEST(Annotate, WithoutTheTracerPythonNothingChanges) {
  if (std::string(GMT_PYTHON3).empty()) GTEST_SKIP() << "no /usr/bin/python3";
  ProcessResult plain = run_process(python_command(), sim_env({{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}}));
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, "inactive\ndone 4\n");
  EXPECT_EQ(plain.err, "");
}

}  // namespace
}  // namespace gpumemtrace::test
