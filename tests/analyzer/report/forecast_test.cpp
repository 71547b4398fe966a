// The forecast (docs/reports.md, "Forecast") of a known loop traced on the simulated device
// (programs/step_workload.cpp): 64 MiB of weights, then per step 4 MiB kept and 32 MiB of activations freed at
// the step's end. On a 1 GiB device step N peaks at 64 + 4N + 32 MiB, so step 233 is the first that does not
// fit (96 + 4·233 = 1028 > 1024): the full run fails there, and a run of a tenth of the steps (23) forecasts it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/size_units.h"
#include "tests/support/source_lines.h"
#include "tests/support/subprocess.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

using Json = nlohmann::json;

TracedRun run_steps(const std::vector<std::string>& args) {
  return run_traced("report_prog_steps", args, {{"GPUMEMTRACE_SIM_MEMORY", "1GiB"}});
}

Json summary_json(const std::string& trace) {
  ProcessResult r = run_gpumemtrace({"summary", "--json", trace});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? Json::parse(r.out) : Json::object();
}

TEST(Forecast, TheFullRunFailsAtStep233) {
  TracedRun run = run_steps({"400", "4", "32"});
  EXPECT_EQ(run.result.exit_code, 3) << run.result.err;
  EXPECT_EQ(run.result.out, "out of memory in step 233\n");
  // The trace that failed: the forecast names the step it failed in, not a time to come.
  Json device = summary_json(run.trace)["forecast"]["devices"].at(0);
  EXPECT_EQ(device["verdict"], "out-of-memory");
  EXPECT_EQ(device["last_step"], 232);
  EXPECT_EQ(device["oom_step"], 233);
  EXPECT_EQ(device["usable_from"], "out-of-memory");
  EXPECT_TRUE(device["oom_in_ns"].is_null()) << device.dump(1);
  ProcessResult text = run_gpumemtrace({"summary", run.trace});
  EXPECT_NE(text.out.find("device 0: it ran out of memory after step 232, and the line of its peaks puts the failure "
                          "at step 233 (exactly, the peaks lie on a line): its peak grew 4.00 MiB per step"),
            std::string::npos)
      << text.out;
}

TEST(Forecast, ATenthOfTheStepsNamesStep233AndTheLeakingLine) {
  TracedRun run = run_steps({"23", "4", "32"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  Json forecast = summary_json(run.trace)["forecast"];
  EXPECT_EQ(forecast["phase"], "step");
  EXPECT_EQ(forecast["min_steps"], 8);
  ASSERT_EQ(forecast["devices"].size(), 1u) << forecast.dump(2);
  const Json& device = forecast["devices"][0];
  EXPECT_EQ(device["verdict"], "out-of-memory");
  EXPECT_EQ(device["steps"], 23);
  EXPECT_EQ(device["last_step"], 23);
  EXPECT_EQ(device["fit_first_step"], 12);
  EXPECT_EQ(device["bytes_per_step"].get<double>(), 4.0 * kMiB);
  EXPECT_EQ(device["residual_bytes"].get<double>(), 0.0);
  EXPECT_EQ(device["last_peak_bytes"], (96 + 4 * 23) * kMiB);
  EXPECT_EQ(device["usable_bytes"], 1024 * kMiB);
  EXPECT_EQ(device["usable_from"], "context");
  EXPECT_EQ(device["oom_step"], 233);
  EXPECT_EQ(device["oom_step_earliest"], 233);
  EXPECT_EQ(device["oom_step_latest"], 233);
  EXPECT_TRUE(device["stable_after_step"].is_null());
  ASSERT_EQ(device["stacks"].size(), 1u) << device.dump(2);
  const Json& stack = device["stacks"][0];
  EXPECT_EQ(stack["bytes_per_step"].get<double>(), 4.0 * kMiB);
  // Growth's last window (steps 22 and 23) starts 21 steps after its first.
  EXPECT_EQ(stack["bytes"], 21 * 4 * kMiB);
  bool named = false;
  for (const Json& frame : stack["stack"])
    if (frame["function"] == "keep_for_logging") {
      named = true;
      EXPECT_EQ(frame["line"], line_containing(STEP_WORKLOAD_SOURCE, "keeps memory step after step"));
    }
  EXPECT_TRUE(named) << stack.dump(2);

  ProcessResult text = run_gpumemtrace({"summary", run.trace});
  EXPECT_NE(text.out.find("forecast (a step is an instance of phase step):\n"
                          "  device 0: at this rate it runs out of memory at step 233 (exactly, the peaks lie on a "
                          "line; in "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("its peak grows 4.00 MiB per step (steps 12 to 23), 188 MiB at step 23, of 1.00 GiB it can use "
                          "(free after its first context was made)\n"
                          "    keeps 4.00 MiB   per step: allocate (step_workload.cpp:" +
                              std::to_string(line_containing(STEP_WORKLOAD_SOURCE, "every allocation of the program")) +
                              ") ← keep_for_logging (step_workload.cpp:" +
                              std::to_string(line_containing(STEP_WORKLOAD_SOURCE, "keeps memory step after step")) +
                              ") ← main (step_workload.cpp:"),
            std::string::npos)
      << text.out;
}

TEST(Forecast, ALoopWhoseMemorySettlesGetsNoOutOfMemoryForecast) {
  // Only the last 5 steps' 4 MiB are kept: the peaks are 100, 104, 108, 112, 116, 116, ... MiB.
  TracedRun run = run_steps({"40", "4", "32", "5"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const Json device = summary_json(run.trace)["forecast"]["devices"][0];
  EXPECT_EQ(device["verdict"], "stable");
  EXPECT_EQ(device["bytes_per_step"].get<double>(), 0.0);
  EXPECT_EQ(device["stable_after_step"], 5);
  EXPECT_EQ(device["stable_peak_bytes"], 116 * kMiB);
  EXPECT_TRUE(device["oom_step"].is_null());
  EXPECT_EQ(device["stacks"].size(), 0u);
  ProcessResult text = run_gpumemtrace({"summary", run.trace});
  EXPECT_NE(text.out.find("  device 0: memory is stable after step 5: no step of the 40 seen held more than 116 MiB\n"),
            std::string::npos)
      << text.out;
}

TEST(Forecast, NamesNoStepBeforeEightSteps) {
  TracedRun run = run_steps({"7", "4", "32"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const Json device = summary_json(run.trace)["forecast"]["devices"][0];
  EXPECT_EQ(device["verdict"], "too-few-steps");
  EXPECT_EQ(device["steps"], 7);
  EXPECT_TRUE(device["oom_step"].is_null());
  EXPECT_TRUE(device["fit_first_step"].is_null());
}

TEST(Forecast, CheckFailsWhenTheForecastFailureIsWithinTheLimit) {
  TracedRun leak = run_steps({"23", "4", "32"});
  ASSERT_EQ(leak.result.exit_code, 0) << leak.result.err;
  // Step 233 is 210 steps after step 23.
  ProcessResult within = run_gpumemtrace({"check", "--max-forecast-steps", "210", leak.trace});
  EXPECT_EQ(within.exit_code, 1) << within.err;
  EXPECT_EQ(within.out,
            "FAIL max-forecast-steps device 0: out of memory forecast in 210 steps (at step 233), within the limit of "
            "210\nFAILED: 1 of 1 checks failed (1 trace)\n");
  ProcessResult beyond = run_gpumemtrace({"check", "--json", "--max-forecast-steps", "209", leak.trace});
  EXPECT_EQ(beyond.exit_code, 0) << beyond.err;
  Json check = Json::parse(beyond.out)["checks"][0];
  EXPECT_EQ(check["check"], "max-forecast-steps");
  EXPECT_EQ(check["measured"], 210);
  EXPECT_EQ(check["limit"], 209);
  EXPECT_EQ(check["passed"], true);

  TracedRun settles = run_steps({"40", "4", "32", "5"});
  ProcessResult stable = run_gpumemtrace({"check", "--json", "--max-forecast-steps", "1000000", settles.trace});
  EXPECT_EQ(stable.exit_code, 0) << stable.err;
  check = Json::parse(stable.out)["checks"][0];
  EXPECT_TRUE(check["measured"].is_null());
  EXPECT_EQ(check["message"], "max-forecast-steps device 0: no out-of-memory failure is forecast");

  ProcessResult bad = run_gpumemtrace({"check", "--max-forecast-steps", "soon", leak.trace});
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace gpumemtrace::test
