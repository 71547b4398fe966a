// The live sets at moments of the timeline (replay/live_moments.h, report/moments_model.h): one moment per
// group of timeline slices, at the first time the group's maximum was live, with exactly what was live
// then; a spike freed within its group is caught; a group without records shows what it started with; a
// moment keeps its 100 largest stacks and sums the rest.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "analyzer/report/report.h"
#include "common/size_units.h"
#include "tests/analyzer/report_helpers.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
constexpr int kSmallStacks = 120;

class LiveMomentsOfATrace : public testing::Test {
 protected:
  // Times are since the first allocation (the timeline's origin), which is at 1000 ns.
  void SetUp() override {
    TraceBuilder b;
    b.thread_new(1, 1, "main");
    for (uint64_t ip = 1; ip <= 3 + kSmallStacks; ++ip) b.stack_node(0, 0xA000 + ip);  // stack k: [0xA000 + k]
    b.alloc(Api::cudaMalloc, 0, 0x1000000, 10 * kMiB, 1, 1000);     // t = 0: weights
    b.alloc(Api::cudaMalloc, 0, 0x2000000, 16 * kMiB, 2, 100'000);  // t = 100 µs: a spike...
    b.free(Api::cudaFree, 0x2000000, 500);                          // ... freed 0.5 µs later
    b.alloc(Api::cudaMalloc, 0, 0x3000000, kMiB, 3, 99'500);        // t = 200 µs
    b.alloc(Api::cudaMalloc, 0, 0x3100000, kMiB, 3, 100'000);       // t = 300 µs
    for (int i = 0; i < kSmallStacks; ++i)                           // t = 500 µs: 120 stacks of 1..120 KiB
      b.alloc(Api::cudaMalloc, 0, 0x5000000 + i * 0x100000, (i + 1) * kKiB, 4 + i, i == 0 ? 200'000 : 0);
    b.end(0, 500'000);                                               // t = 1 ms
    analysis_ = analyze_built(scratch_, b);
    report_ = report::build_report(analysis_, {},
                                   [](replay::StackId id) {
                                     symbolize::Frame frame;
                                     frame.function = "stack" + std::to_string(id);
                                     return report::Frames{frame};
                                   },
                                   report::build_body<report::viewer_report>);
    const auto& viewer = std::get<report::ViewerReport>(report_.body);
    ASSERT_EQ(viewer.moments.accounts.size(), 1u);
    moments_ = &viewer.moments.accounts[0].moments;
  }

  const report::Moment& moment_at(uint64_t since_origin_ns) const {
    uint64_t t = 1000 + since_origin_ns;
    auto it = std::find_if(moments_->begin(), moments_->end(),
                           [&](const report::Moment& m) { return m.start_ns <= t && t < m.end_ns; });
    EXPECT_NE(it, moments_->end()) << t;
    return *it;
  }
  std::string function_of(const report::SiteFigures& site) const { return report_.stacks[site.stack].at(0).function; }

  ScratchDir scratch_;
  analysis::Analysis analysis_;
  report::Report report_;
  const std::vector<report::Moment>* moments_ = nullptr;
};

TEST_F(LiveMomentsOfATrace, EachMomentHoldsTheMostItsSlicesDrew) {
  const replay::Replay& replay = *analysis_.replay;
  std::vector<uint64_t> timeline = replay.timeline(replay.accounts().devices().at(0));
  uint64_t origin = replay.timeline_clock().origin_ns(), width = replay.timeline_clock().width_ns();
  ASSERT_EQ(origin, 1000u);
  ASSERT_LE(moments_->size(), report::MomentsModel::kMaxMoments);
  // Every group of slices has its moment: the groups cover the timeline.
  size_t group = (timeline.size() + report::MomentsModel::kMaxMoments - 1) / report::MomentsModel::kMaxMoments;
  EXPECT_EQ(moments_->size(), (timeline.size() + group - 1) / group);
  for (const report::Moment& m : *moments_) {
    ASSERT_LE(m.start_ns, m.time_ns);
    ASSERT_LT(m.time_ns, m.end_ns);
    size_t first = (m.start_ns - origin) / width, last = std::min<size_t>((m.end_ns - origin + width - 1) / width, timeline.size());
    EXPECT_EQ(m.live_bytes, *std::max_element(timeline.begin() + first, timeline.begin() + last)) << m.time_ns;
    uint64_t listed = std::accumulate(m.sites.begin(), m.sites.end(), m.other_bytes,
                                      [](uint64_t sum, const report::SiteFigures& s) { return sum + s.bytes; });
    EXPECT_EQ(listed, m.live_bytes) << m.time_ns;
  }
}

TEST_F(LiveMomentsOfATrace, ASpikeFreedWithinItsSlicesIsTheMomentShown) {
  const report::Moment& spike = moment_at(100'000);
  EXPECT_EQ(spike.time_ns, 1000u + 100'000);
  EXPECT_EQ(spike.live_bytes, 26 * kMiB);
  EXPECT_EQ(spike.live_count, 2u);
  ASSERT_EQ(spike.sites.size(), 2u);
  EXPECT_EQ(spike.sites[0].bytes, 16 * kMiB);
  EXPECT_EQ(function_of(spike.sites[0]), "stack2");
  EXPECT_EQ(spike.sites[1].bytes, 10 * kMiB);
  EXPECT_EQ(function_of(spike.sites[1]), "stack1");
}

TEST_F(LiveMomentsOfATrace, SlicesWithoutRecordsShowWhatTheyStartedWith) {
  const report::Moment& quiet = moment_at(400'000);
  EXPECT_EQ(quiet.time_ns, quiet.start_ns);
  EXPECT_EQ(quiet.live_bytes, 12 * kMiB);
  ASSERT_EQ(quiet.sites.size(), 2u);
  EXPECT_EQ(quiet.sites[1].bytes, 2 * kMiB);
  EXPECT_EQ(quiet.sites[1].count, 2u);
  EXPECT_EQ(function_of(quiet.sites[1]), "stack3");
}

TEST_F(LiveMomentsOfATrace, AMomentKeepsItsLargestStacksAndSumsTheRest) {
  const report::Moment& last = moment_at(900'000);
  uint64_t small = kSmallStacks * (kSmallStacks + 1) / 2 * kKiB;
  EXPECT_EQ(last.live_bytes, 12 * kMiB + small);
  EXPECT_EQ(last.live_count, 3u + kSmallStacks);
  ASSERT_EQ(last.sites.size(), report::MomentsModel::kSitesPerMoment);
  // Kept: weights, the stack of the two 1 MiB allocations, and the 98 largest small ones (23..120 KiB).
  EXPECT_EQ(last.other_sites, 2u + kSmallStacks - report::MomentsModel::kSitesPerMoment);
  EXPECT_EQ(last.other_count, last.other_sites);
  EXPECT_EQ(last.other_bytes, 22u * 23 / 2 * kKiB);
  EXPECT_EQ(last.sites.back().bytes, 23 * kKiB);
}

}  // namespace
}  // namespace gpumemtrace::test
