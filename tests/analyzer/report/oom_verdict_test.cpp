// The order and the thresholds of the OOM verdicts (analyzer/report/oom_diagnosis.h), on hand-built traces.
#include <gtest/gtest.h>

#include "analyzer/report/growth.h"
#include "analyzer/report/oom_diagnosis.h"
#include "common/size_units.h"
#include "tests/analyzer/report_helpers.h"

namespace gpumemtrace::test {
namespace {

using format::Api;

class OomVerdict : public testing::Test {
 protected:
  // The process holds `live` on device 0 of 1 GiB; then a request of `requested` fails with `free` free.
  report::OomDiagnosis diagnose(uint64_t live, uint64_t requested, uint64_t free, uint64_t pool_reserved = 0) {
    TraceBuilder b;
    b.thread_new(1, 1, "main").stack_node(0, 0xA000);
    if (live) b.alloc(Api::cudaMalloc, 0, 0x1000000, live, 1, 1000);
    b.alloc_failed(Api::cudaMalloc, 0, requested, 1, 2, 1000, free, 1024 * kMiB);
    if (pool_reserved) b.pool_usage(0xF00, 0, pool_reserved, 0, 0);
    b.end(2, 1000);
    analysis_ = analyze_built(scratch_, b);
    const replay::Replay& r = *analysis_.replay;
    return report::diagnose(r, r.failures().at(0), report::find_growth(r));
  }
  ScratchDir scratch_;
  analysis::Analysis analysis_;
};

TEST_F(OomVerdict, OthersHoldingLessThanThisProcessIsNotTheirFault) {
  report::OomDiagnosis d = diagnose(600 * kMiB, 200 * kMiB, 100 * kMiB);  // others: 324 MiB < 600 MiB
  EXPECT_EQ(d.others_bytes, 324 * kMiB);
  EXPECT_EQ(d.held_bytes, 600 * kMiB);
  EXPECT_EQ(d.shortfall_bytes, 100 * kMiB);
  EXPECT_EQ(d.verdict, report::Verdict::LiveSet);
}

TEST_F(OomVerdict, OthersHoldingMoreThanThisProcessAndEnoughToFitIt) {
  report::OomDiagnosis d = diagnose(200 * kMiB, 200 * kMiB, 100 * kMiB);  // others: 724 MiB
  EXPECT_EQ(d.others_bytes, 724 * kMiB);
  EXPECT_EQ(d.verdict, report::Verdict::OtherProcesses);
}

TEST_F(OomVerdict, UnusedPoolMemoryComesBeforeOtherProcesses) {
  report::OomDiagnosis d = diagnose(0, 300 * kMiB, 100 * kMiB, 400 * kMiB);  // others: 524 MiB, pools: 400 unused
  EXPECT_EQ(d.pool_unused_bytes, 400 * kMiB);
  EXPECT_EQ(d.others_bytes, 524 * kMiB);
  EXPECT_EQ(d.verdict, report::Verdict::PoolCache);
}

TEST_F(OomVerdict, ARequestLargerThanTheDeviceIsTooLargeWhateverElseHolds) {
  EXPECT_EQ(diagnose(0, 2048 * kMiB, 1024 * kMiB, 400 * kMiB).verdict, report::Verdict::TooLarge);
}

}  // namespace
}  // namespace gpumemtrace::test
