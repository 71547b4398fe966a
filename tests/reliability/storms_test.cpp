// Storms around the writer: a 10 kHz signal whose handler allocates, and forks while threads allocate.
// Counts stay exact and nothing deadlocks (ctest's timeout is the deadlock detector).
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <variant>

#include "tests/support/program_output.h"
#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

TEST(SignalStorm, EveryEventIsRecordedWhileSignalsInterruptTheWriter) {
  constexpr int kThreads = 4, kPairs = 50000;
  TracedRun run = run_traced("reliability_prog_signal_storm", {std::to_string(kThreads), std::to_string(kPairs)});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.err, "");
  EXPECT_EQ(printed_value(run.result.out, "done"), static_cast<uint64_t>(kThreads * kPairs));
  // The storm really ran: at 10 kHz even a fast run takes hundreds of signals.
  EXPECT_GT(printed_value(run.result.out, "signals"), 100u);
  TraceFacts facts = read_trace(run.trace);
  EXPECT_TRUE(facts.complete()) << facts.error;
  ASSERT_EQ(facts.allocs.size(), static_cast<size_t>(kThreads * kPairs));
  EXPECT_EQ(facts.frees.size(), static_cast<size_t>(kThreads * kPairs));
  std::map<uint64_t, int> per_size_class;
  for (const auto& a : facts.allocs) ++per_size_class[a.size / 1024];
  ASSERT_EQ(per_size_class.size(), static_cast<size_t>(kThreads));
  for (const auto& [kib, count] : per_size_class) EXPECT_EQ(count, kPairs) << kib << " KiB";
}

// The phase names a trace records, in order.
std::vector<std::string> phase_names(const std::string& path, trace::Status& status) {
  std::vector<std::string> names;
  trace::Reader reader(path);
  while (const trace::Record* record = reader.next()) {
    if (auto* name = std::get_if<trace::PhaseName>(record)) names.emplace_back(name->name);
  }
  status = reader.status();
  return names;
}

// The parent's trace has exactly the pairs its threads made, and each worker a complete trace of its own
// holding its one phase.
void expect_fork_storm_traces(const TracedRun& run) {
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.err, "");
  TraceFacts parent = read_trace(run.trace);
  EXPECT_TRUE(parent.complete()) << parent.error;
  std::map<uint64_t, uint64_t> per_size;
  for (const auto& a : parent.allocs) ++per_size[a.size];
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(per_size[512 * (t + 1)], printed_value(run.result.out, "thread " + std::to_string(t))) << "thread " << t;
  }
  EXPECT_EQ(parent.frees.size(), parent.allocs.size());
  std::istringstream out(run.result.out);
  std::string line;
  int worker = 0;
  while (std::getline(out, line)) {
    if (line.rfind("worker ", 0) != 0) continue;
    std::string path = run.dir + "/child." + line.substr(7) + ".trace";
    SCOPED_TRACE(line);
    ASSERT_TRUE(file_exists(path));
    trace::Status status;
    EXPECT_EQ(phase_names(path, status), std::vector<std::string>{"worker " + std::to_string(worker)});
    EXPECT_EQ(status, trace::Status::Complete);
    ++worker;
  }
  EXPECT_EQ(worker, 64);
}

TEST(ForkStorm, SixtyFourWorkersForkWhileEightThreadsAllocate) {
  expect_fork_storm_traces(run_traced("reliability_prog_fork_storm"));
}

// glibc's fork leaves the lock of the loader's list as it found it: a worker forked while a thread of the
// parent walked that list (the tracer does at a thread's first stack) would hang at its first event. Here
// such walks take 100 ms, so the first workers are forked during one.
TEST(ForkStorm, WorkersForkedWhileAThreadWalksTheLoadersListDoesNotHang) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A sanitizer's runtime walks the loader's list while it starts, before the library that slows the walks
  // can be run: the plain build runs this test.
  GTEST_SKIP() << "the slow walks cannot be preloaded beside a sanitizer's runtime";
#endif
  std::string slow_walks = lib_dir() + "/libreliability_slow_loader_walk.so";
  expect_fork_storm_traces(
      run_traced("reliability_prog_fork_storm", {}, {{"LD_PRELOAD", tracer_preload() + ":" + slow_walks}}));
}

}  // namespace
}  // namespace gpumemtrace::test
