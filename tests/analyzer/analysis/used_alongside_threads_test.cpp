// The used view read alongside the first reading, for ThreadSanitizer (the tsan preset runs it): the two
// readings hand marks over on two threads, and the replay taken is the one the used view's reading after the
// first makes. Links the analysis alone, so that the sanitized build stays small.
#include <gtest/gtest.h>

#include <memory>

#include "analyzer/analysis/analysis.h"
#include "tests/analyzer/analysis/heaps_trace.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {
namespace {

TEST(UsedAlongsideThreads, TheReplayTakenIsTheUsedViewsReadAfterTheFirst) {
  ScratchDir scratch;
  // 6000 segments with their heaps next to them: 48 thousand records, three handovers.
  std::string path = write_file(scratch / "t.trace", heaps_trace(6000, 0).bytes());
  analysis::Analysis analysis = analysis::analyze(path, {}, {}, {.used_view_alongside = true});
  ASSERT_TRUE(analysis.used_alongside);
  std::unique_ptr<replay::Replay> alongside = analysis::take_used_alongside(analysis);
  ASSERT_TRUE(alongside);
  replay::ReplayOptions options = analysis.options;
  options.used_view = std::make_shared<const replay::UsedView>(analysis.replay->used_view());
  std::unique_ptr<replay::Replay> after = analysis::reread(analysis, analysis::Pass::UsedView, options);

  ASSERT_EQ(alongside->accounts().size(), after->accounts().size());
  for (replay::AccountId id = 0; id < after->accounts().size(); ++id) {
    const replay::Account& a = alongside->accounts()[id];
    const replay::Account& b = after->accounts()[id];
    EXPECT_EQ(a.peak_bytes, b.peak_bytes) << id;
    EXPECT_EQ(a.peak_time_ns, b.peak_time_ns) << id;
    EXPECT_EQ(a.live_bytes, b.live_bytes) << id;
    EXPECT_EQ(a.allocations, b.allocations) << id;
    EXPECT_EQ(a.frees, b.frees) << id;
  }
  // The workspace (3 MiB, never heap memory) and each kept segment's block of 5000 bytes; no segment.
  const replay::Account* device = alongside->accounts().find_device(0);
  ASSERT_TRUE(device);
  EXPECT_EQ(device->live_bytes, 3u * (1 << 20) + 858u * 5000);
  ASSERT_EQ(alongside->sites().size(), after->sites().size());
  for (size_t i = 0; i < after->sites().size(); ++i) {
    EXPECT_EQ(alongside->sites()[i].stack, after->sites()[i].stack) << i;
    EXPECT_EQ(alongside->sites()[i].bytes, after->sites()[i].bytes) << i;
  }
}

// Stopped while it may still be reading (a report that will not take it): it ends, and gives nothing.
TEST(UsedAlongsideThreads, AReadingStoppedMidwayEndsAndIsNotTaken) {
  ScratchDir scratch;
  std::string path = write_file(scratch / "t.trace", heaps_trace(6000, 0).bytes());
  analysis::Analysis analysis = analysis::analyze(path, {}, {}, {.used_view_alongside = true});
  ASSERT_TRUE(analysis.used_alongside);
  analysis.used_alongside->stop();
  EXPECT_FALSE(analysis::take_used_alongside(analysis));
}

}  // namespace
}  // namespace gpumemtrace::test
