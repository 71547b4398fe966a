// The passes over a trace (analyzer/analysis/passes.h): which readings a report makes, counted in
// Analysis::passes, on hand-built traces with and without heaps.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/analysis.h"
#include "analyzer/report/report.h"
#include "analyzer/report/whatif_model.h"
#include "common/size_units.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {

using analysis::Pass;
using format::Api;
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

TEST(PassList, EachPassIsNamedWithWhatItReadsProducesAndWhenItRuns) {
  for (const analysis::PassInfo& info : analysis::kPasses) {
    EXPECT_FALSE(info.name.empty());
    EXPECT_FALSE(info.reads.empty()) << info.name;
    EXPECT_FALSE(info.produces.empty()) << info.name;
    EXPECT_FALSE(info.runs.empty()) << info.name;
  }
  EXPECT_EQ(analysis::pass_info(Pass::UsedView).name, "used view");
}

struct PassesCase {
  std::string name;
  bool heaps;
  report::BuildBody body;
  std::optional<report::View> view;
  uint32_t used_view;  // the readings of each pass after the report was built
  uint32_t moments;
  uint32_t readings;
};

TEST(Passes, EachReportMakesTheReadingsItNeeds) {
  const std::vector<PassesCase> cases = {
      {"the summary of a trace without heaps: the first reading alone", false,
       report::build_body<report::summary_report>, std::nullopt, 0, 0, 1},
      {"the used view of a trace with heaps: a second reading", true, report::build_body<report::peak_report>,
       std::nullopt, 1, 0, 2},
      {"the reserved view of a trace with heaps: the first reading alone", true,
       report::build_body<report::peak_report>, report::View::Reserved, 0, 0, 1},
      {"the viewer: the moments read again", false, report::build_body<report::viewer_report>, std::nullopt, 0, 1, 2},
  };
  for (const PassesCase& c : cases) {
    ScratchDir scratch;
    analysis::Analysis analysis = analysis::analyze(write_file(scratch / "t.trace", trace(c.heaps).bytes()));
    EXPECT_EQ(analysis.passes[Pass::First], 1u) << c.name;
    report::Selection selection;
    selection.view = c.view;
    report::build_report(analysis, selection, [](replay::StackId) { return report::Frames{}; }, c.body);
    EXPECT_EQ(analysis.passes[Pass::First], 1u) << c.name;
    EXPECT_EQ(analysis.passes[Pass::UsedView], c.used_view) << c.name;
    EXPECT_EQ(analysis.passes[Pass::Moments], c.moments) << c.name;
    EXPECT_EQ(analysis.passes.readings(), c.readings) << c.name;
  }
}

// whatif of a trace without PyTorch: one reading of the recorded requests (the heap's block), no history and, with
// no request out of memory, no first reading for the phases.
TEST(Passes, WhatifOfHeapBlocksReadsTheRecordedRequestsOnce) {
  ScratchDir scratch;
  report::WhatifModel model = report::whatif_report(write_file(scratch / "t.trace", trace(true).bytes()), {});
  ASSERT_EQ(model.devices.size(), 1u);
  EXPECT_EQ(model.devices[0].requests, 1u);
  EXPECT_EQ(model.passes[Pass::Recorded], 1u);
  EXPECT_EQ(model.passes[Pass::History], 0u);
  EXPECT_EQ(model.passes.readings(), 1u);
}

}  // namespace
}  // namespace gpumemtrace::test
