// A long run: the traced process's resident set must not grow with its trace. The trace is written through a
// shared mapping of the file; pages left mapped stay in the process's resident set (RssFile) however long
// ago they were written, so a 40 GiB trace made a 40 GiB process in `ps`, and in the RSS-based accounting
// of batch schedulers. scripts/load.sh runs the same program for an hour (docs/reliability.md).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

constexpr long kMiB = 1 << 20;

TEST(LongTrace, TheTracedProcessResidentSetStaysFlatWhileTheTraceGrows) {
  constexpr uint64_t kPairs = 4'000'000;
  TracedRun run = run_traced("reliability_prog_steady", {"--pairs", std::to_string(kPairs)});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.err, "");
  std::istringstream out(run.result.out);
  std::string key;
  uint64_t pairs = 0;
  long anon_start = 0, anon_end = 0, file_start = 0, file_end = 0;
  out >> key >> pairs >> key >> anon_start >> anon_end >> key >> file_start >> file_end;
  ASSERT_EQ(key, "rss_file_kib") << run.result.out;
  EXPECT_EQ(pairs, kPairs);

  struct stat trace {};
  ASSERT_EQ(stat(run.trace.c_str(), &trace), 0);
  EXPECT_GT(trace.st_size, 32 * kMiB);
  // At most the step being written and the one before it (8 MiB each) stay mapped.
  EXPECT_LT((file_end - file_start) * 1024, 16 * kMiB) << run.result.out << "trace: " << trace.st_size << " bytes";
  EXPECT_LT((anon_end - anon_start) * 1024, 8 * kMiB) << run.result.out;

  ProcessResult summary = run_gpumemtrace({"summary", "--json", run.trace});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  nlohmann::json json = nlohmann::json::parse(summary.out);
  EXPECT_EQ(json["trace"]["complete"], true);
  EXPECT_EQ(json["devices"][0]["allocations"], kPairs);
  EXPECT_EQ(json["devices"][0]["frees"], kPairs);
  EXPECT_EQ(json["devices"][0]["final_bytes"], 0u);
}

}  // namespace
}  // namespace gpumemtrace::test
