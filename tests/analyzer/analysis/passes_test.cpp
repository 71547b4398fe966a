// The passes over a trace (analyzer/analysis/passes.h): which readings a report makes, counted in
// Analysis::passes, on hand-built traces with and without heaps.
#include <gtest/gtest.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/report/report.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {

using analysis::Pass;
using format::Api;
constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kSegment = 0x10000000;

// A cudaMalloc of 2 MiB and, with heaps, a heap over it with one block of 1000 bytes.
TraceBuilder trace(bool heaps) {
  TraceBuilder b;
  b.thread_new(1, 1, "main");
  b.stack_node(0, 0xA000);
  b.alloc(Api::cudaMalloc, 0, kSegment, 2 * kMiB, 1, 1000);
  if (!heaps) return b.end(1, 1000);
  b.event(trace::HeapCreate{{}, 1, trace::kNoDevice, kSegment, 2 * kMiB, "pool"}, 1000);
  b.event(trace::SubAlloc{{}, 1, kSegment, 1000, 1024, 1}, 1000);
  return b.end(3, 1000);
}

class Passes : public testing::Test {
 protected:
  analysis::Analysis analyze(bool heaps) {
    return analysis::analyze(write_file(scratch_ / "t.trace", trace(heaps).bytes()));
  }
  static report::Report build(const analysis::Analysis& analysis, report::BuildBody body,
                              report::Selection selection = {}) {
    return report::build_report(analysis, selection, [](replay::StackId) { return report::Frames{}; }, body);
  }

  ScratchDir scratch_;
};

TEST(PassList, EachPassIsNamedWithWhatItReadsProducesAndWhenItRuns) {
  for (const analysis::PassInfo& info : analysis::kPasses) {
    EXPECT_FALSE(info.name.empty());
    EXPECT_FALSE(info.reads.empty()) << info.name;
    EXPECT_FALSE(info.produces.empty()) << info.name;
    EXPECT_FALSE(info.runs.empty()) << info.name;
  }
  EXPECT_EQ(analysis::pass_info(Pass::UsedView).name, "used view");
}

TEST_F(Passes, ATraceWithoutHeapsIsReadOnceForTheSummary) {
  analysis::Analysis analysis = analyze(false);
  EXPECT_EQ(analysis.passes[Pass::First], 1u);
  build(analysis, report::build_body<report::summary_report>);
  EXPECT_EQ(analysis.passes.readings(), 1u);
}

TEST_F(Passes, TheUsedViewOfATraceWithHeapsIsASecondReading) {
  analysis::Analysis analysis = analyze(true);
  build(analysis, report::build_body<report::peak_report>);
  EXPECT_EQ(analysis.passes[Pass::First], 1u);
  EXPECT_EQ(analysis.passes[Pass::UsedView], 1u);
  EXPECT_EQ(analysis.passes.readings(), 2u);
}

TEST_F(Passes, TheReservedViewOfATraceWithHeapsIsTheFirstReadingAlone) {
  analysis::Analysis analysis = analyze(true);
  report::Selection reserved;
  reserved.view = report::View::Reserved;
  build(analysis, report::build_body<report::peak_report>, reserved);
  EXPECT_EQ(analysis.passes.readings(), 1u);
}

TEST_F(Passes, TheViewerReadsTheMomentsAgain) {
  analysis::Analysis analysis = analyze(false);
  build(analysis, report::build_body<report::viewer_report>);
  EXPECT_EQ(analysis.passes[Pass::Moments], 1u);
  EXPECT_EQ(analysis.passes[Pass::UsedView], 0u);
}

}  // namespace
}  // namespace gpumemtrace::test
