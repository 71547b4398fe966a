// The used view read alongside the first reading (analyzer/analysis/used_alongside.h): the reports made from
// it are those made from the used view read after the first, byte for byte, on traces long enough for many
// handovers; and the judging it rests on (replay/heap_segments.h, SegmentsAhead streamed): an allocation
// judged no segment before its mark came makes the reading not the used view's, unless it ended first.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "analyzer/analysis/analysis.h"
#include "analyzer/render/renderers.h"
#include "analyzer/replay/heap_segments.h"
#include "analyzer/report/report.h"
#include "tests/analyzer/analysis/heaps_trace.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {
namespace {

using analysis::Pass;
using format::Api;

std::string report_json(const analysis::Analysis& analysis, report::BuildBody body) {
  report::Report report = report::build_report(
      analysis, {},
      [](replay::StackId id) {
        symbolize::Frame frame;
        frame.function = fmt::format("s{}", id);
        return report::Frames{frame};
      },
      body);
  fmt::memory_buffer out;
  render::render_json(report, {}, out);
  return fmt::to_string(out);
}

struct Case {
  std::string name;
  uint32_t segments;
  uint32_t heap_after;
  uint32_t readings_after;  // of the used view, read after the first
  uint32_t least_alongside, most_alongside;
};

TEST(UsedAlongside, MakesTheReportsOfTheUsedViewReadAfterTheFirst) {
  // 3000 segments with their heaps next: 24 thousand records, a handover every 16 thousand. With plain
  // allocations between, at addresses segments take later: those are taken for segments by mistake, and the
  // used view read once more knowing them. Heaps 5000 records after their segments: past the lag, so the
  // reading alongside is dropped when it passed a segment before its heap came (or taken, when it did not).
  const Case cases[] = {{"heaps next to their segments", 3000, 0, 1, 1, 1},
                        {"plain allocations where segments come later", 2000, 1, 2, 2, 2},
                        {"heaps long after their segments", 40, 2500, 2, 2, 3},
                        {"heaps far after their segments", 2, 100000, 1, 1, 2}};
  for (const Case& c : cases) {
    ScratchDir scratch;
    std::string path = write_file(scratch / "t.trace", heaps_trace(c.segments, c.heap_after).bytes());
    for (report::BuildBody body : {report::build_body<report::summary_report>, report::build_body<report::peak_report>,
                                   report::build_body<report::leaks_report>}) {
      analysis::Analysis after = analysis::analyze(path);
      analysis::Analysis alongside = analysis::analyze(path, {}, {}, {.used_view_alongside = true});
      ASSERT_TRUE(alongside.used_alongside) << c.name;
      std::string expected = report_json(after, body);
      EXPECT_EQ(report_json(alongside, body), expected) << c.name;
      EXPECT_NE(expected.find("\"view\""), std::string::npos) << c.name;
      EXPECT_EQ(after.passes[Pass::UsedView], c.readings_after) << c.name;
      EXPECT_GE(alongside.passes[Pass::UsedView], c.least_alongside) << c.name;
      EXPECT_LE(alongside.passes[Pass::UsedView], c.most_alongside) << c.name;
    }
  }
}

// Growth's windows follow a phase of the trace (chosen after the first reading): the used view is read after
// the first with them, and the reading alongside is stopped, not taken.
TEST(UsedAlongside, IsStoppedWhenGrowthFollowsAPhase) {
  TraceBuilder b;
  b.thread_new(1, 1, "main");
  b.stack_node(0, 0xA000).stack_node(0, 0xB000);
  b.record(trace::PhaseName{0, 0, "step"});
  uint64_t events = 0;
  for (uint64_t k = 1; k <= 6; ++k) {
    uint64_t segment = 0x10000000 * k;
    b.event(trace::PhasePush{{}, 0}, 1000);
    b.alloc(Api::cudaMalloc, 0, segment, 2 << 20, 1, 1000);
    b.event(trace::HeapCreate{{}, k, 0, segment, 2 << 20, "pool"}, 1000);
    b.event(trace::SubAlloc{{}, k, segment, 1000 * k, 1024 * k, 2}, 1000);
    b.event(trace::PhasePop{{}, 0}, 1000);
    events += 5;
  }
  b.end(events + 1, 1000);
  ScratchDir scratch;
  std::string path = write_file(scratch / "t.trace", b.bytes());
  for (report::BuildBody body : {report::build_body<report::summary_report>, report::build_body<report::growth_report>}) {
    analysis::Analysis after = analysis::analyze(path);
    analysis::Analysis alongside = analysis::analyze(path, {}, {}, {.used_view_alongside = true});
    ASSERT_TRUE(alongside.used_alongside);
    std::string expected = report_json(after, body);
    EXPECT_NE(expected.find("\"growth_windows\":{\"phase\":\"step\""), std::string::npos) << expected;
    EXPECT_EQ(report_json(alongside, body), expected);
    EXPECT_EQ(after.passes[Pass::UsedView], 1u);
    EXPECT_EQ(alongside.passes[Pass::UsedView], 2u);  // the one stopped, and the one with growth's windows
    EXPECT_FALSE(alongside.used_alongside->take());
  }
}

TEST(UsedAlongside, NothingRunsForATraceWithoutHeaps) {
  TraceBuilder b;
  b.thread_new(1, 1, "main");
  b.stack_node(0, 0xA000);
  b.alloc(Api::cudaMalloc, 0, 0x1000000, 1 << 20, 1, 1000);
  b.end(2, 1000);
  ScratchDir scratch;
  analysis::Analysis analysis =
      analysis::analyze(write_file(scratch / "t.trace", b.bytes()), {}, {}, {.used_view_alongside = true});
  EXPECT_FALSE(analysis.used_alongside);
  EXPECT_EQ(analysis.passes.readings(), 1u);
}

constexpr uint64_t kA = 0x1000, kB = 0x2000, kC = 0x3000;

TEST(SegmentsAheadStreamed, AMarkThatCameWhileTheAllocationJudgedWithoutItLivedMisjudgesIt) {
  replay::UsedView view;
  replay::SegmentsAhead ahead(view, true);
  view.marks.push_back({kA, 5, 100});
  ahead.view_grew(false);
  EXPECT_EQ(ahead.allocated(kA, 4, 1), 100u);  // its mark had come
  EXPECT_EQ(ahead.allocated(kB, 6, 2), std::nullopt);
  view.marks.push_back({kB, 20, 50});
  ahead.view_grew(false);
  EXPECT_FALSE(ahead.freed(kB, 25));
  ahead.finish();
  EXPECT_TRUE(ahead.misjudged());
}

TEST(SegmentsAheadStreamed, AnAllocationThatEndedBeforeTheLateMarkIsJudgedRight) {
  replay::UsedView view;
  replay::SegmentsAhead ahead(view, true);
  EXPECT_EQ(ahead.allocated(kC, 7, 1), std::nullopt);
  view.marks.push_back({kC, 30, 64});  // of a later allocation at the address
  ahead.view_grew(false);
  EXPECT_FALSE(ahead.freed(kC, 28));
  EXPECT_EQ(ahead.allocated(kC, 29, 2), 64u);
  EXPECT_TRUE(ahead.freed(kC, 40));
  ahead.view_grew(true);
  ahead.finish();
  EXPECT_FALSE(ahead.misjudged());
  EXPECT_TRUE(ahead.mistakes().empty());
}

TEST(SegmentsAheadStreamed, AnAllocationStillLiveAtTheEndWithALateMarkIsMisjudged) {
  replay::UsedView view;
  replay::SegmentsAhead ahead(view, true);
  EXPECT_EQ(ahead.allocated(kA, 3, 1), std::nullopt);
  view.marks.push_back({kA, 9, 10});
  ahead.view_grew(true);
  ahead.finish();
  EXPECT_TRUE(ahead.misjudged());
}

TEST(SegmentsAheadStreamed, NothingIsJudgedEarlyOnceTheViewIsWhole) {
  replay::UsedView view;
  replay::SegmentsAhead ahead(view, true);
  ahead.view_grew(true);
  EXPECT_EQ(ahead.allocated(kA, 3, 1), std::nullopt);
  ahead.finish();
  EXPECT_FALSE(ahead.misjudged());
}

}  // namespace
}  // namespace gpumemtrace::test
