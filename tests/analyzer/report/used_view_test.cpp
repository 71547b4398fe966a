// The used view (docs/reports.md, "Views"): a program's allocator reported heaps, so peak, leaks, growth
// and the summary count its blocks in place of the driver-level segments that hold them, and never both;
// an allocation that is no heap memory counts as it is. Hand-built traces with exact figures: pointer
// segments (one of them at an address a plain allocation held first), VMM memory mapped into a heap, and
// an arena that a heap covers in part.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "analyzer/report/report.h"
#include "common/size_units.h"
#include "tests/analyzer/report_helpers.h"
#include "tests/support/subprocess.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
constexpr uint64_t kSegment = 0x10000000, kSegment2 = 0x30000000, kReused = 0x40000000, kWorkspace = 0x20000000;
// The innermost frame of each stack (stack ids are the trie's nodes, each a child of the root).
constexpr uint64_t kNewSegment = 0xA000, kTensorA = 0xB000, kWorkspaceFrame = 0xC000, kTensorB = 0xD000,
                   kScratch = 0xE000;

// One event per microsecond:
//   1  segment S (2 MiB, new_segment)              7  segment S2 (2 MiB, new_segment)
//   2  heap 1 over S (no device said)               8  heap 2 over S2, on device 0
//   3  block A in S (1000 asked, 1024 reserved)     9  block C in S2 (200000, tensor B)
//   4  workspace W (512 KiB, a plain cudaMalloc)   10  W freed
//   5  block B in S (300000, tensor B)             11  scratch P (1 MiB) at address R, a plain cudaMalloc
//   6  block B freed                               12  P freed
//                                                  13  segment at R (2 MiB, new_segment)
//                                                  14  heap 3 over R
//                                                  15  block D in R (4096, tensor A)
//                                                  16  the end (the process exited)
// Used: 0 until 3, then 1000; 525288 at 4; 825288 at 5; 525288 at 6 and 7 (a naive reading counts S2 from
// 7 to 8: 2622440); 725288 at 9; 201000 at 10; 1249576 at 11, the peak (P is no segment: the reading that
// took it for R's segment learns so at 12 and reads again); 201000 at 12 and 13; 205096 at 15.
// Reserved: 2 MiB at 1; 2.5 MiB at 4; 4.5 MiB at 7; 4 MiB at 10; 5 MiB at 11; 4 MiB at 12; 6 MiB at 13.
TraceBuilder heap_trace() {
  TraceBuilder b;
  b.thread_new(1, 1, "main");
  for (uint64_t ip : {kNewSegment, kTensorA, kWorkspaceFrame, kTensorB, kScratch}) b.stack_node(0, ip);
  b.alloc(Api::cudaMalloc, 0, kSegment, 2 * kMiB, 1, 1000);
  b.event(trace::HeapCreate{{}, 1, trace::kNoDevice, kSegment, 2 * kMiB, "pool"}, 1000);
  b.event(trace::SubAlloc{{}, 1, kSegment, 1000, 1024, 2}, 1000);
  b.alloc(Api::cudaMalloc, 0, kWorkspace, 512 * 1024, 3, 1000);
  b.event(trace::SubAlloc{{}, 1, kSegment + 1024, 300000, 300032, 4}, 1000);
  b.event(trace::SubFree{{}, 1, kSegment + 1024}, 1000);
  b.alloc(Api::cudaMalloc, 0, kSegment2, 2 * kMiB, 1, 1000);
  b.event(trace::HeapCreate{{}, 2, 0, kSegment2, 2 * kMiB, "pool"}, 1000);
  b.event(trace::SubAlloc{{}, 2, kSegment2, 200000, 0, 4}, 1000);
  b.free(Api::cudaFree, kWorkspace, 1000);
  b.alloc(Api::cudaMalloc, 0, kReused, kMiB, 5, 1000);
  b.free(Api::cudaFree, kReused, 1000);
  b.alloc(Api::cudaMalloc, 0, kReused, 2 * kMiB, 1, 1000);
  b.event(trace::HeapCreate{{}, 3, trace::kNoDevice, kReused, 2 * kMiB, "pool"}, 1000);
  b.event(trace::SubAlloc{{}, 3, kReused, 4096, 4096, 2}, 1000);
  b.end(15, 1000);
  return b;
}

class UsedView : public testing::Test {
 protected:
  void SetUp() override { analysis_ = analyze_built(scratch_, heap_trace()); }

  // Frames named after the innermost address of the first reading's stack: a stack of a second reading
  // that had another id would show another name.
  report::Report build(report::BuildBody body, report::Selection selection = {}) {
    const replay::StackTable& stacks = analysis_.replay->stacks();
    return report::build_report(analysis_, selection,
                                [&](replay::StackId id) {
                                  symbolize::Frame frame;
                                  frame.function = fmt::format("{:#x}", stacks.frames(id).front().offset);
                                  return report::Frames{frame};
                                },
                                body);
  }
  std::string innermost(const report::Report& report, replay::StackId stack) {
    return report.stacks[stack].at(0).function;
  }

  ScratchDir scratch_;
  analysis::Analysis analysis_;
};

TEST_F(UsedView, IsTheDefaultWithHeaps) {
  report::Report report = build(report::build_body<report::peak_report>);
  ASSERT_TRUE(report.view);
  EXPECT_EQ(report.view->view, report::View::Used);
  EXPECT_EQ(report.view->heaps, 3u);
}

TEST_F(UsedView, ThePeakCountsBlocksAndPlainAllocationsButNoSegment) {
  report::Report report = build(report::build_body<report::peak_report>);
  const report::PeakModel& peak = std::get<report::PeakReport>(report.body).peak;
  ASSERT_EQ(peak.devices.size(), 1u);
  const report::AccountFigures& device = peak.devices[0].account;
  EXPECT_EQ(device.peak_bytes, 1249576u);
  EXPECT_EQ(device.peak_time_ns, 11000u);
  EXPECT_EQ(device.peak_count, 3u);
  // Blocks A, B, C, D, the workspace and the scratch; no segment.
  EXPECT_EQ(device.allocations, 6u);
  EXPECT_EQ(device.frees, 3u);
  const std::vector<report::SiteFigures>& sites = peak.devices[0].sites;
  ASSERT_EQ(sites.size(), 3u);
  EXPECT_EQ(innermost(report, sites[0].stack), "0xe000");
  EXPECT_EQ(sites[0].bytes, kMiB);
  EXPECT_EQ(innermost(report, sites[1].stack), "0xd000");
  EXPECT_EQ(sites[1].bytes, 200000u);
  EXPECT_EQ(innermost(report, sites[2].stack), "0xb000");
  EXPECT_EQ(sites[2].bytes, 1000u);
}

TEST_F(UsedView, NoSegmentCountsBeforeItsHeapIsCreated) {
  report::Report report = build(report::build_body<report::timeline_report>);
  const report::TimelineModel& timeline = std::get<report::TimelineReport>(report.body).timeline;
  ASSERT_EQ(timeline.series.size(), 1u);
  const std::vector<uint64_t>& most = timeline.series[0].max_bytes;
  ASSERT_GE(most.size(), 16u);  // slices of 1 us from the first allocation at 1 us
  EXPECT_EQ(*std::max_element(most.begin(), most.end()), 1249576u);
  EXPECT_EQ(most[0], 0u);       // S, before heap 1
  EXPECT_EQ(most[6], 525288u);  // S2, before heap 2
  EXPECT_EQ(most[12], 201000u);  // the segment at R, before heap 3
}

TEST_F(UsedView, LeaksAreTheBlocksStillHandedOut) {
  report::Report report = build(report::build_body<report::leaks_report>);
  const report::LeaksModel& leaks = std::get<report::LeaksReport>(report.body).leaks;
  EXPECT_EQ(leaks.bytes, 205096u);
  EXPECT_EQ(leaks.count, 3u);
  ASSERT_EQ(leaks.sites.size(), 2u);
  EXPECT_EQ(innermost(report, leaks.sites[0].stack), "0xd000");
  EXPECT_EQ(leaks.sites[0].bytes, 200000u);
  EXPECT_EQ(innermost(report, leaks.sites[1].stack), "0xb000");
  EXPECT_EQ(leaks.sites[1].bytes, 5096u);
  EXPECT_EQ(leaks.sites[1].count, 2u);
}

TEST_F(UsedView, TheReservedViewCountsTheSegmentsWhole) {
  report::Selection selection;
  selection.view = report::View::Reserved;
  report::Report report = build(report::build_body<report::peak_report>, selection);
  EXPECT_EQ(report.view->view, report::View::Reserved);
  const report::PeakModel& peak = std::get<report::PeakReport>(report.body).peak;
  EXPECT_EQ(peak.devices.at(0).account.peak_bytes, 6 * kMiB);
  EXPECT_EQ(peak.devices.at(0).account.peak_time_ns, 13000u);
  ASSERT_EQ(peak.devices[0].sites.size(), 1u);
  EXPECT_EQ(innermost(report, peak.devices[0].sites[0].stack), "0xa000");
  EXPECT_EQ(peak.devices[0].sites[0].count, 3u);
}

TEST_F(UsedView, TheSummaryHasBothPeaks) {
  report::Report report = build(report::build_body<report::summary_report>);
  const report::AccountsModel& accounts = std::get<report::SummaryReport>(report.body).accounts;
  ASSERT_EQ(accounts.devices.size(), 1u);
  EXPECT_EQ(accounts.devices[0].peak_bytes, 1249576u);
  ASSERT_EQ(accounts.other_view, report::View::Reserved);
  ASSERT_EQ(accounts.other_devices.size(), 1u);
  EXPECT_EQ(accounts.other_devices[0].peak_bytes, 6 * kMiB);
  EXPECT_EQ(accounts.other_devices[0].peak_time_ns, 13000u);
  EXPECT_EQ(accounts.other_devices[0].final_bytes, 6 * kMiB);
}

TEST_F(UsedView, ReportsOnTheDriverStayAsTheDriverSawIt) {
  report::Report report = build(report::build_body<report::phases_report>);
  EXPECT_FALSE(report.view);  // no figure of it depends on the view
  report = build(report::build_body<report::fragmentation_report>);
  EXPECT_FALSE(report.view);
}

TEST_F(UsedView, TheCommandsSayTheView) {
  std::string path = write_file(scratch_ / "heaps.trace", heap_trace().bytes());
  ProcessResult text = run_gpumemtrace({"summary", path});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("\nview: used: the blocks of the program's 3 heaps count, not the segments that hold them "
                          "(--view reserved: the driver's allocations)\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  device 0           peak 1.19 MiB at 11 µs (3 live); at exit 200 KiB in 3 allocations; "
                          "6 allocations, 3 frees, 0 failed\n"
                          "                     reserved view: peak 6.00 MiB at 13 µs; at exit 6.00 MiB\n"),
            std::string::npos)
      << text.out;

  ProcessResult json = run_gpumemtrace({"peak", "--json", "--view", "reserved", path});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json peak = nlohmann::json::parse(json.out);
  EXPECT_EQ(peak["view"], "reserved");
  EXPECT_EQ(peak["devices"][0]["peak_bytes"], 6 * kMiB);

  ProcessResult bad = run_gpumemtrace({"peak", "--view", "blocks", path});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "gpumemtrace peak: --view blocks is not one of: used, reserved (see gpumemtrace peak --help)\n");
}

// Expandable segments: VMM physical memory mapped into a heap's reserved address range, the second handle
// after the heap was created. The handles never count in the used view, not even between their creation
// and their mapping into the heap.
//   1  handle H1 (2 MiB)          5  handle H2 (2 MiB)            (a naive reading: 3 MiB from 5 to 6)
//   2  H1 mapped at V             6  H2 mapped at V + 2 MiB
//   3  heap over [V, V + 4 MiB)   7  block in H2's memory (1.5 MiB): the peak, 2.5 MiB
//   4  block at V (1 MiB)         8  the end
TEST(UsedViewVmm, MappedHandlesAreSegments) {
  constexpr uint64_t kVa = 0x7000000000;
  TraceBuilder b;
  b.thread_new(1, 1, "main").stack_node(0, kNewSegment).stack_node(0, kTensorA);
  b.alloc(Api::cuMemCreate, 0, 0x11, 2 * kMiB, 1, 1000);
  b.mem_map(kVa, 2 * kMiB, 0x11, 0, 1000);
  b.event(trace::HeapCreate{{}, 1, trace::kNoDevice, kVa, 4 * kMiB, "expandable"}, 1000);
  b.event(trace::SubAlloc{{}, 1, kVa, kMiB, 0, 2}, 1000);
  b.alloc(Api::cuMemCreate, 0, 0x12, 2 * kMiB, 1, 1000);
  b.mem_map(kVa + 2 * kMiB, 2 * kMiB, 0x12, 0, 1000);
  b.event(trace::SubAlloc{{}, 1, kVa + 2 * kMiB, 3 * kMiB / 2, 0, 2}, 1000);
  b.end(7, 1000);
  ScratchDir scratch;
  analysis::Analysis analysis = analyze_built(scratch, b);
  report::Stacks stacks;
  report::ModelInput input(analysis, {}, [](replay::StackId) { return report::Frames{}; }, stacks);
  ASSERT_EQ(input.view(), report::View::Used);
  const replay::Replay& used = input.replay();
  const replay::Account& device = *used.accounts().find_device(0);
  EXPECT_EQ(device.peak_bytes, 5 * kMiB / 2);
  EXPECT_EQ(device.peak_time_ns, 7000u);
  EXPECT_EQ(device.allocations, 2u);
  // The blocks are VMM memory, as their heap's segments are.
  EXPECT_EQ(device.kind_bytes_at_peak[static_cast<size_t>(trace::MemoryKind::VmmPhysical)], 5 * kMiB / 2);
  const replay::Account& reserved = *input.reserved_replay().accounts().find_device(0);
  EXPECT_EQ(reserved.peak_bytes, 4 * kMiB);
}

// A heap over the second half of a 4 MiB arena: the half outside the heap still counts, with the arena's
// stack, and the block in the heap with its own.
TEST(UsedViewArena, ThePartOfAnAllocationOutsideItsHeapStillCounts) {
  constexpr uint64_t kArena = 0x50000000;
  TraceBuilder b;
  b.thread_new(1, 1, "main").stack_node(0, kWorkspaceFrame).stack_node(0, kTensorA);
  b.alloc(Api::cudaMalloc, 0, kArena, 4 * kMiB, 1, 1000);
  b.event(trace::HeapCreate{{}, 1, 0, kArena + 2 * kMiB, 2 * kMiB, "upper half"}, 1000);
  b.event(trace::SubAlloc{{}, 1, kArena + 2 * kMiB, kMiB, 0, 2}, 1000);
  b.end(3, 1000);
  ScratchDir scratch;
  analysis::Analysis analysis = analyze_built(scratch, b);
  report::Stacks stacks;
  report::ModelInput input(analysis, {}, [](replay::StackId) { return report::Frames{}; }, stacks);
  const replay::Replay& used = input.replay();
  EXPECT_EQ(used.accounts().find_device(0)->peak_bytes, 3 * kMiB);
  const replay::Site* arena = site_at(used, kWorkspaceFrame);
  ASSERT_NE(arena, nullptr);
  EXPECT_EQ(arena->bytes, 2 * kMiB);
  const replay::Site* block = site_at(used, kTensorA);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->bytes, kMiB);
}

}  // namespace
}  // namespace gpumemtrace::test
