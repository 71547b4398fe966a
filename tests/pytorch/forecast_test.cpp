// The forecast (docs/reports.md, "Forecast") of a PyTorch loop on the simulated device (leak_steps.py): 12 MiB
// kept per step on a 2 GiB device. The full run fails in step 171; a run of a tenth of the steps (17) forecasts
// that step and names the line that keeps the tensors; a loop that keeps only the last 5 steps' gets none.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/pytorch/torch_run.h"
#include "tests/support/source_lines.h"

namespace gpumemtrace::test {
namespace {

const std::string kLeakStepsScript = std::string(GMT_PYTORCH_TESTS) + "/leak_steps.py";

TorchRun leak_steps(const std::vector<std::string>& args) {
  return run_torch(kLeakStepsScript, args, "2GiB", {{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}});
}

TEST(TorchForecast, TheFullRunFailsInStep171) {
  REQUIRE_TORCH();
  TorchRun run = leak_steps({"400", "12"});
  EXPECT_EQ(run.result.exit_code, 3) << describe(run.result);
  ASSERT_EQ(run.objects.size(), 1u) << describe(run.result);
  EXPECT_EQ(run.objects[0]["oom_step"], 171);
}

TEST(TorchForecast, ATenthOfTheStepsForecastsStep171AndNamesTheLine) {
  REQUIRE_TORCH();
  TorchRun run = leak_steps({"17", "12"});
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  nlohmann::json forecast = report({"summary", "--json", run.trace})["forecast"];
  EXPECT_EQ(forecast["phase"], "step");
  ASSERT_EQ(forecast["devices"].size(), 1u) << forecast.dump(2);
  const nlohmann::json& device = forecast["devices"][0];
  EXPECT_EQ(device["verdict"], "out-of-memory") << device.dump(2);
  EXPECT_EQ(device["steps"], 17);
  EXPECT_EQ(device["bytes_per_step"].get<double>(), 12.0 * kMiB);
  EXPECT_EQ(device["usable_bytes"], 2 * kGiB);
  // Within 5 % of step 171 (the done-when of issue 25); the peaks, 2 + 12 x N MiB, lie on a line, so exactly.
  uint64_t step = device["oom_step"];
  EXPECT_LE(step * 100, 171u * 105);
  EXPECT_GE(step * 100, 171u * 95);
  EXPECT_EQ(step, 171u);
  EXPECT_EQ(device["oom_step_earliest"], 171);
  EXPECT_EQ(device["oom_step_latest"], 171);
  ASSERT_GE(device["stacks"].size(), 1u) << device.dump(2);
  const nlohmann::json& stack = device["stacks"][0];
  EXPECT_EQ(stack["bytes_per_step"].get<double>(), 12.0 * kMiB);
  uint32_t line = line_containing(kLeakStepsScript, "the line that keeps memory");
  bool named = false;
  for (const nlohmann::json& frame : stack["stack"])
    named |= frame["kind"] == "python" && frame["function"] == "train_step" && frame["line"] == line;
  EXPECT_TRUE(named) << stack.dump(2);
  ProcessResult text = run_gpumemtrace({"summary", run.trace});
  EXPECT_NE(text.out.find("  device 0: at this rate it runs out of memory at step 171 (exactly"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("    keeps 12.0 MiB   per step: leak_steps.py:" + std::to_string(line) + " in train_step"),
            std::string::npos)
      << text.out;
}

TEST(TorchForecast, ALoopThatSettlesGetsNoOutOfMemoryForecast) {
  REQUIRE_TORCH();
  TorchRun run = leak_steps({"40", "12", "5"});
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  nlohmann::json device = report({"summary", "--json", run.trace})["forecast"]["devices"][0];
  EXPECT_EQ(device["verdict"], "stable") << device.dump(2);
  // Step 6 takes a sixth segment before it lets go of step 1's tensor; later steps reuse the cached segment:
  // the device holds 2 + 6 x 12 MiB from step 6 on.
  EXPECT_EQ(device["stable_after_step"], 6);
  EXPECT_EQ(device["stable_peak_bytes"], 74 * kMiB);
  EXPECT_TRUE(device["oom_step"].is_null());
  EXPECT_EQ(device["stacks"].size(), 0u);
}

}  // namespace
}  // namespace gpumemtrace::test
