// The report models (analyzer/report/report.h) without any renderer: what each report selects (--device,
// --top, --min-size) and the OOM verdict's words, computed in the model.
#include <gtest/gtest.h>

#include "analyzer/report/report.h"
#include "common/size_units.h"
#include "tests/analyzer/report_helpers.h"

namespace gpumemtrace::test {
namespace {

using format::Api;

class ReportModels : public testing::Test {
 protected:
  void SetUp() override {
    TraceBuilder b;
    b.thread_new(1, 1, "main").stack_node(0, 0xA000).stack_node(1, 0xB000);  // stacks 1: [a], 2: [b, a]
    b.alloc(Api::cudaMalloc, 0, 0x1000000, 10 * kMiB, 2, 1000);
    b.alloc(Api::cudaMalloc, 0, 0x2000000, 1 * kMiB, 1, 1000);
    b.alloc(Api::cudaMalloc, 1, 0x3000000, 4 * kMiB, 1, 1000);
    b.alloc(Api::cudaMallocManaged, 0, 0x4000000, 2 * kMiB, 1, 1000);
    b.alloc_failed(Api::cudaMalloc, 0, 2048 * kMiB, 2, 2, 1000, 1000 * kMiB, 1024 * kMiB);
    b.end(5, 1000);
    analysis_ = analyze_built(scratch_, b);
  }

  // Frames named after the stack they stand for, so a test can tell which stack a model refers to.
  report::Report build(report::BuildBody body, report::Selection selection = {}) {
    return report::build_report(analysis_, selection,
                                [](replay::StackId id) {
                                  symbolize::Frame frame;
                                  frame.function = "stack" + std::to_string(id);
                                  return report::Frames{frame};
                                },
                                body);
  }

  ScratchDir scratch_;
  analysis::Analysis analysis_;
};

TEST_F(ReportModels, SummaryHoldsEverySectionAndTheStacksItRefersTo) {
  report::Report report = build(report::build_body<report::summary_report>);
  const auto& summary = std::get<report::SummaryReport>(report.body);
  EXPECT_TRUE(report.trace.complete);
  ASSERT_EQ(summary.accounts.devices.size(), 2u);
  ASSERT_EQ(summary.accounts.other_memory.size(), 1u);
  EXPECT_EQ(summary.accounts.other_memory[0].memory, report::Memory::Managed);
  ASSERT_EQ(summary.leaks.sites.size(), 4u);  // managed memory too
  EXPECT_EQ(summary.leaks.bytes, 17 * kMiB);
  EXPECT_EQ(summary.leaks.sites[0].bytes, 10 * kMiB);
  for (const report::SiteFigures& site : summary.leaks.sites)
    EXPECT_EQ(report.stacks[site.stack].at(0).function, "stack" + std::to_string(site.stack));
  ASSERT_EQ(summary.peak.devices.size(), 2u);
  EXPECT_EQ(summary.peak.devices[0].sites.size(), 2u);
}

TEST_F(ReportModels, TheOomVerdictIsWordedInTheModel) {
  report::Report report = build(report::build_body<report::oom_report>);
  const report::OomModel& ooms = std::get<report::OomReport>(report.body).ooms;
  ASSERT_EQ(ooms.failures.size(), 1u);
  const report::OomFailure& failure = ooms.failures[0];
  EXPECT_EQ(failure.verdict, report::Verdict::TooLarge);
  EXPECT_EQ(failure.finding, "the request alone (2.00 GiB) is more than the device's whole memory (1.00 GiB)");
  EXPECT_TRUE(failure.remedy.starts_with("split the work")) << failure.remedy;
  EXPECT_EQ(failure.error, "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(failure.others_bytes, 1024 * kMiB - 1000 * kMiB - 11 * kMiB);
  ASSERT_EQ(failure.live_set.size(), 2u);
}

TEST_F(ReportModels, SelectionHappensWhileBuilding) {
  report::Selection selection;
  selection.device = 1;
  report::Report one_device = build(report::build_body<report::leaks_report>, selection);
  const report::LeaksModel& leaks = std::get<report::LeaksReport>(one_device.body).leaks;
  ASSERT_EQ(leaks.sites.size(), 1u);
  EXPECT_EQ(leaks.sites[0].device, 1);
  EXPECT_EQ(leaks.bytes, 4 * kMiB);

  selection = {};
  selection.top = 1;
  selection.min_size = 2 * kMiB;
  report::Report top_one = build(report::build_body<report::peak_report>, selection);
  const report::PeakModel& peak = std::get<report::PeakReport>(top_one.body).peak;
  ASSERT_EQ(peak.sites.size(), 2u);  // one per device
  EXPECT_EQ(peak.sites[0].bytes, 10 * kMiB);
  EXPECT_EQ(peak.sites[1].bytes, 4 * kMiB);

  selection = {};
  selection.min_size = 5 * kMiB;
  report::Report big_only = build(report::build_body<report::oom_report>, selection);
  EXPECT_EQ(std::get<report::OomReport>(big_only.body).ooms.failures.at(0).live_set.size(), 1u);
}

}  // namespace
}  // namespace gpumemtrace::test
