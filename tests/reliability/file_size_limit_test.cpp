// A trace that cannot grow (the process's file size limit, as a quota or a full disk would stop it): the
// program runs on to its normal end with one warning, and the trace holds every event up to that point.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

TEST(FileSizeLimit, ProgramRunsOnWithOneWarningAndTheTraceKeepsItsStart) {
  // The tracer reserves 8 MiB when it starts; the limit (set by the program after that) stops the next step.
  constexpr long kPairs = 2000000;
  TracedRun run = run_traced("reliability_prog_file_size_limit", {std::to_string(9 << 20), std::to_string(kPairs)});
  // Growing a file past RLIMIT_FSIZE raises SIGXFSZ, which kills a process by default: the tracer must not.
  ASSERT_EQ(run.result.term_signal, 0) << "killed by signal " << run.result.term_signal;
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.out, "done " + std::to_string(kPairs) + "\n");
  EXPECT_NE(run.result.err.find("could not be extended"), std::string::npos) << run.result.err;
  EXPECT_EQ(std::count(run.result.err.begin(), run.result.err.end(), '\n'), 1) << run.result.err;

  TraceFacts facts = read_trace(run.trace);
  EXPECT_EQ(facts.status, trace::Status::Truncated) << facts.error;
  // About 8 MiB of events, the first ones the program made, in order and exact.
  EXPECT_GT(facts.allocs.size(), 500000u);
  EXPECT_LT(facts.allocs.size(), static_cast<size_t>(kPairs));
  for (size_t i = 0; i < facts.allocs.size(); ++i) {
    ASSERT_EQ(facts.allocs[i].size, 4096 + i % 1000) << "allocation " << i;
  }
  EXPECT_GE(facts.frees.size() + 1, facts.allocs.size());
  EXPECT_LE(facts.frees.size(), facts.allocs.size());
}

}  // namespace
}  // namespace gpumemtrace::test
