// The driver found from many threads at once, and loaded and unloaded over and over.
#include <gtest/gtest.h>

#include <set>

#include "tests/support/program_output.h"
#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

TEST(DriverLoading, SixteenThreadsCallCuInitAtOnce) {
  TracedRun run = run_traced("reliability_prog_concurrent_init");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.err, "");
  TraceFacts facts = read_trace(run.trace);
  EXPECT_TRUE(facts.complete()) << facts.error;
  std::multiset<uint64_t> sizes;
  for (const auto& a : facts.allocs) sizes.insert(a.size);
  std::multiset<uint64_t> expected;
  for (uint64_t t = 0; t < 16; ++t) expected.insert(1000 + t);
  EXPECT_EQ(sizes, expected);
  EXPECT_EQ(facts.frees.size(), 16u);
}

TEST(DriverLoading, DriverUnloadedAndReloadedAHundredTimes) {
  TracedRun run = run_traced("reliability_prog_driver_reload", {"100"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(printed_value(run.result.out, "done"), 100u);
  TraceFacts facts = read_trace(run.trace);
  EXPECT_TRUE(facts.complete()) << facts.error;
  ASSERT_EQ(facts.allocs.size(), 100u);
  for (size_t i = 0; i < facts.allocs.size(); ++i) EXPECT_EQ(facts.allocs[i].size, 4096 + i);
  EXPECT_EQ(facts.frees.size(), 100u);
}

}  // namespace
}  // namespace gpumemtrace::test
