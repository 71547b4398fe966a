// Traces of programs/budget_workload.cpp, whose figures are known exactly, run under the tracer on the
// simulated device; and the gpumemtrace command. For the tests of check, baseline, diff and the reports
// of a directory of rank traces.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {

// A traced run of budget_workload: WEIGHTS CACHE ACTIVATIONS [OOM] in MiB. Peak = their sum; leak = CACHE.
inline std::string workload_trace(const std::vector<std::string>& mib, EnvChanges env = {}) {
  TracedRun run = run_traced("report_prog_budget", mib, std::move(env));
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  return run.trace;
}

}  // namespace gpumemtrace::test
