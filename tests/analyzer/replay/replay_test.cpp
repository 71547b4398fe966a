// The replay model on hand-built traces: accounting by kind, the peak and its live set, frees that do not
// add up, VMM, pools at a failure, stacks across resets, truncated traces.
#include <gtest/gtest.h>

#include "common/size_units.h"
#include "tests/analyzer/report_helpers.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using format::Token;

// Three one-frame stacks: 1 -> 0xA000, 2 -> 0xB000, 3 -> 0xC000.
TraceBuilder three_stacks() {
  TraceBuilder b;
  b.thread_new(1, 100, "main");
  b.stack_node(0, 0xA000).stack_node(0, 0xB000).stack_node(0, 0xC000);
  return b;
}

class Replay : public testing::Test {
 protected:
  ScratchDir scratch_;
  analysis::Analysis analyze(const TraceBuilder& b) { return analyze_built(scratch_, b); }
};

TEST_F(Replay, PeakIsTheFirstMaximumWithTheLiveSetOfThatMoment) {
  TraceBuilder b = three_stacks();
  b.alloc(Api::cudaMalloc, 0, 0x1000000, 10 * kMiB, 1, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x2000000, 20 * kMiB, 2, 1000);  // 30 MiB at 2 µs: the peak
  b.free(Api::cudaFree, 0x1000000, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x3000000, 10 * kMiB, 3, 1000);  // 30 MiB again at 4 µs: not a new peak
  b.free(Api::cudaFree, 0x2000000, 1000);
  b.end(5, 1000);
  analysis::Analysis a = analyze(b);
  const replay::Replay& r = *a.replay;
  ASSERT_TRUE(a.trace.complete);
  const replay::Account* device = r.accounts().find_device(0);
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->peak_bytes, 30 * kMiB);
  EXPECT_EQ(device->peak_time_ns, 2000u);
  EXPECT_EQ(device->peak_count, 2u);
  EXPECT_EQ(r.at_peak(site_id(r, site_at(r, 0xA000))).bytes, 10 * kMiB);
  EXPECT_EQ(r.at_peak(site_id(r, site_at(r, 0xB000))).bytes, 20 * kMiB);
  EXPECT_EQ(r.at_peak(site_id(r, site_at(r, 0xC000))).bytes, 0u);
  EXPECT_EQ(device->live_bytes, 10 * kMiB);
  EXPECT_EQ(device->allocations, 3u);
  EXPECT_EQ(device->frees, 2u);
  EXPECT_EQ(r.inconsistencies().total(), 0u);
}

TEST_F(Replay, DeviceMemoryAddsUpDeviceAsyncVmmAndArraysButNotManagedOrPinned) {
  TraceBuilder b = three_stacks();
  b.alloc(Api::cuMemAlloc, 0, 0x1000000, 1 * kMiB, 1, 1000);
  b.alloc(Api::cudaMallocAsync, 0, 0x2000000, 2 * kMiB, 1, 1000, 0x77);
  b.alloc(Api::cuMemCreate, 0, 0x5, 4 * kMiB, 1, 1000);  // a VMM handle, not an address
  b.alloc(Api::cudaMallocArray, 0, 0x600000, 8 * kMiB, 1, 1000);
  b.alloc(Api::cudaMallocManaged, 0, 0x3000000, 16 * kMiB, 2, 1000);
  b.alloc(Api::cudaMallocHost, -1, 0x4000000, 32 * kMiB, 3, 1000);
  b.end(6, 1000);
  analysis::Analysis a = analyze(b);
  const replay::Accounts& accounts = a.replay->accounts();
  EXPECT_EQ(accounts.find_device(0)->peak_bytes, 15 * kMiB);
  EXPECT_EQ(accounts.find_device(0)->kind_bytes[static_cast<size_t>(trace::MemoryKind::VmmPhysical)], 4 * kMiB);
  EXPECT_EQ(accounts[replay::Accounts::kManaged].peak_bytes, 16 * kMiB);
  EXPECT_EQ(accounts[replay::Accounts::kHostPinned].peak_bytes, 32 * kMiB);
  EXPECT_EQ(accounts.devices().size(), 1u);
}

TEST_F(Replay, FreesThatDoNotAddUpAreCountedAndTheReplayGoesOn) {
  TraceBuilder b = three_stacks();
  b.alloc(Api::cudaMalloc, 0, 0x1000000, kMiB, 1, 1000);
  b.free(Api::cudaFree, 0x1000000, 1000);
  b.free(Api::cudaFree, 0x1000000, 1000);  // double free
  b.free(Api::cudaFree, 0x9000000, 1000);  // never allocated
  b.alloc(Api::cudaMalloc, 0, 0x2000000, kMiB, 1, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x2000000, 2 * kMiB, 2, 1000);  // its free is missing
  b.end(6, 1000);
  analysis::Analysis a = analyze(b);
  const replay::Inconsistencies& bad = a.replay->inconsistencies();
  EXPECT_EQ(bad.double_frees, 1u);
  EXPECT_EQ(bad.unknown_frees, 1u);
  EXPECT_EQ(bad.reallocated_live, 1u);
  EXPECT_EQ(bad.total(), 3u);
  EXPECT_EQ(a.replay->accounts().find_device(0)->live_bytes, 2 * kMiB);
}

TEST_F(Replay, AFreeTheDriverRefusedPutsTheAllocationBack) {
  TraceBuilder b = three_stacks();
  b.alloc(Api::cudaMalloc, 0, 0x1000000, kMiB, 1, 1000);
  b.free(Api::cudaFree, 0x1000000, 1000);
  b.free_failed(Api::cudaFree, 0x1000000, 1, 0);  // CUDA_ERROR_INVALID_VALUE: still allocated
  b.end(4, 1000);
  analysis::Analysis a = analyze(b);
  const replay::Account& device = *a.replay->accounts().find_device(0);
  EXPECT_EQ(device.live_bytes, kMiB);
  EXPECT_EQ(device.live_count, 1u);
  EXPECT_EQ(device.frees, 0u);
  EXPECT_EQ(a.replay->inconsistencies().restored_allocations, 1u);
  EXPECT_EQ(a.replay->inconsistencies().total(), 0u);
}

TEST_F(Replay, AFreeOfAnUnknownAddressThatTheDriverRefusedIsTheProgramsBugNotTheTraces) {
  TraceBuilder b = three_stacks();
  b.alloc(Api::cudaMalloc, 0, 0x1000000, kMiB, 1, 1000);
  b.free(Api::cudaFree, 0x1000000, 1000);
  b.free(Api::cudaFree, 0x1000000, 1000);
  b.free_failed(Api::cudaFree, 0x1000000, 1, 0);
  b.end(4, 1000);
  analysis::Analysis a = analyze(b);
  EXPECT_EQ(a.replay->accounts().find_device(0)->live_bytes, 0u);
  EXPECT_EQ(a.replay->inconsistencies().double_frees, 0u);
  EXPECT_EQ(a.replay->inconsistencies().refused_invalid_frees, 1u);
  EXPECT_EQ(a.replay->inconsistencies().total(), 0u);
}

TEST_F(Replay, VmmPhysicalMemoryCountsFromCreateToReleaseAndMappingsApart) {
  TraceBuilder b = three_stacks();
  b.alloc(Api::cuMemCreate, 0, 0x11, 4 * kMiB, 1, 1000);
  b.alloc(Api::cuMemCreate, 0, 0x12, 2 * kMiB, 1, 1000);
  b.range(Token::AddressReserve, 0x7000000000, 16 * kMiB, 1000);
  b.mem_map(0x7000000000, 4 * kMiB, 0x11, 0, 1000);
  b.mem_map(0x7000400000, 2 * kMiB, 0x12, 0, 1000);
  b.range(Token::MemUnmap, 0x7000400000, 2 * kMiB, 1000);
  b.range(Token::MemUnmap, 0x7100000000, 2 * kMiB, 1000);  // nothing mapped there
  b.free(Api::cuMemRelease, 0x12, 1000);
  b.end(9, 1000);
  analysis::Analysis a = analyze(b);
  const replay::Account& device = *a.replay->accounts().find_device(0);
  EXPECT_EQ(device.peak_bytes, 6 * kMiB);
  EXPECT_EQ(device.kind_bytes[static_cast<size_t>(trace::MemoryKind::VmmPhysical)], 4 * kMiB);
  EXPECT_EQ(device.vmm_mapped_bytes, 4 * kMiB);
  EXPECT_EQ(device.vmm_mapped_at_peak, 0u);
  EXPECT_EQ(a.replay->inconsistencies().unknown_unmaps, 1u);
}

TEST_F(Replay, AFailureKeepsTheLiveSetAndThePoolUsageRecordsWrittenWithIt) {
  TraceBuilder b = three_stacks();
  b.pool(Token::PoolCreate, 0xF00, 0, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x1000000, 100 * kMiB, 1, 1000);
  b.alloc(Api::cudaMallocAsync, 0, 0x2000000, 10 * kMiB, 2, 1000, 0x77);
  b.alloc_failed(Api::cudaMalloc, 0, 800 * kMiB, 3, 2, 1000, 300 * kMiB, 1024 * kMiB);
  b.pool_usage(0xF00, 0, 600 * kMiB, 10 * kMiB, 0);
  b.pool_usage(0xF01, 0, 4 * kMiB, 2 * kMiB, 0);
  b.mem_info(0, 300 * kMiB, 1024 * kMiB, 1000);
  b.pool_usage(0xF02, 0, 8 * kMiB, 8 * kMiB, 0);  // after another event: not part of the failure
  b.end(9, 1000);
  analysis::Analysis a = analyze(b);
  const replay::Replay& r = *a.replay;
  ASSERT_EQ(r.failures().size(), 1u);
  const replay::Failure& f = r.failures()[0];
  EXPECT_EQ(f.requested_bytes, 800 * kMiB);
  EXPECT_EQ(f.device_free, 300 * kMiB);
  EXPECT_EQ(f.device_total, 1024 * kMiB);
  EXPECT_EQ(f.live_bytes, 110 * kMiB);
  EXPECT_EQ(f.live_count, 2u);
  EXPECT_EQ(f.time_ns, 4000u);
  ASSERT_EQ(f.live_set.size(), 2u);
  EXPECT_EQ(f.live_set[0].bytes, 100 * kMiB);
  EXPECT_EQ(f.live_set[1].bytes, 10 * kMiB);
  ASSERT_EQ(f.pools.size(), 2u);
  EXPECT_EQ(f.pools[0].pool, 0xF00u);
  EXPECT_EQ(f.pools[0].reserved_bytes, 600 * kMiB);
  EXPECT_EQ(f.pools[1].pool, 0xF01u);
  EXPECT_EQ(r.accounts().find_device(0)->failed_allocations, 1u);
  EXPECT_EQ(r.pools().size(), 3u);
}

TEST_F(Replay, CuptisPoolRecordsGiveThePoolItsReleaseThresholdAndUsage) {
  // As the CUPTI backend writes them: a Source record, the pool's creation, its threshold, then its usage.
  TraceBuilder b = three_stacks();
  b.record(trace::Source{1});
  b.pool(Token::PoolCreate, 0xF00, 0, 1000);
  b.event(trace::PoolThreshold{{}, 0xF00, 64 * kMiB}, 0);
  b.alloc(Api::cuMemAllocFromPoolAsync, 0, 0x2000000, 10 * kMiB, 1, 1000, 0x7, 0xF00);
  b.pool_usage(0xF00, 0, 32 * kMiB, 10 * kMiB, 1000);
  b.pool(Token::PoolCreate, 0xF01, 0, 1000);  // a pool CUPTI said nothing more about
  b.end(5, 1000);
  analysis::Analysis a = analyze(b);
  const replay::Replay& r = *a.replay;
  ASSERT_TRUE(a.trace.complete);
  ASSERT_EQ(r.pools().size(), 2u);
  EXPECT_EQ(r.pools()[0].release_threshold, 64 * kMiB);
  EXPECT_EQ(r.pools()[0].reserved_bytes, 32 * kMiB);
  EXPECT_EQ(r.pools()[0].used_bytes, 10 * kMiB);
  EXPECT_EQ(r.pools()[1].release_threshold, std::nullopt);
  EXPECT_EQ(r.accounts().find_device(0)->live_bytes, 10 * kMiB);
}

TEST_F(Replay, AFailureWithoutDeviceFiguresTakesTheLastMemInfo) {
  TraceBuilder b = three_stacks();
  b.mem_info(0, 5 * kMiB, 64 * kMiB, 1000);
  b.alloc_failed(Api::cudaMalloc, 0, 80 * kMiB, 1, 2, 1000, 0, 0);
  b.end(2, 1000);
  analysis::Analysis a = analyze(b);
  ASSERT_EQ(a.replay->failures().size(), 1u);
  EXPECT_EQ(a.replay->failures()[0].device_free, 5 * kMiB);
  EXPECT_EQ(a.replay->failures()[0].device_total, 64 * kMiB);
}

TEST_F(Replay, EqualStacksShareOneIdAcrossAStacksReset) {
  TraceBuilder b;
  b.thread_new(1, 100, "main");
  b.stack_node(0, 0xA000).stack_node(1, 0xA100);
  b.alloc(Api::cudaMalloc, 0, 0x1000000, kMiB, 2, 1000);
  b.stacks_reset();
  b.stack_node(0, 0xB000).stack_node(0, 0xA000).stack_node(2, 0xA100);
  b.alloc(Api::cudaMalloc, 0, 0x2000000, kMiB, 3, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x3000000, kMiB, 1, 1000);
  b.end(3, 1000);
  analysis::Analysis a = analyze(b);
  const replay::Replay& r = *a.replay;
  const replay::Site* shared = site_at(r, 0xA100);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->count, 2u);
  ASSERT_EQ(r.stacks().frames(shared->stack).size(), 2u);
  EXPECT_EQ(r.stacks().frames(shared->stack)[1].offset, 0xA000u);
  EXPECT_EQ(site_at(r, 0xB000)->count, 1u);
}

// A chain of 10,000 nested calls, an allocation at each depth: the stacks share their callers' frames, one
// node per frame in all, and a stack is cut only when asked to.
TEST_F(Replay, StacksShareTheFramesOfTheirCallers) {
  TraceBuilder b;
  b.process(1, 0, 0, 0, -1, "host", "/bin/x", {"x"});
  b.thread_new(1, 100, "main");
  constexpr uint64_t kDepth = 10000;
  for (uint64_t depth = 1; depth <= kDepth; ++depth) {
    b.stack_node(depth - 1, 0xA000 + depth);
    b.alloc(Api::cudaMalloc, 0, 0x1000000 + depth * 0x1000, 512, depth, 1);
  }
  b.end(kDepth, 1);
  analysis::Analysis a = analyze(b);
  const replay::StackTable& stacks = a.replay->stacks();
  EXPECT_EQ(stacks.size(), kDepth + 1);  // with the empty stack
  const replay::Site* deepest = site_at(*a.replay, 0xA000 + kDepth);
  ASSERT_NE(deepest, nullptr);
  EXPECT_EQ(stacks.depth(deepest->stack), kDepth);
  std::vector<replay::FrameRef> all = stacks.frames(deepest->stack);
  ASSERT_EQ(all.size(), kDepth);
  EXPECT_EQ(all.front().offset, 0xA000 + kDepth);
  EXPECT_EQ(all.back().offset, 0xA001u);
  std::vector<replay::FrameRef> cut = stacks.frames(deepest->stack, replay::kMaxShownFrames);
  ASSERT_EQ(cut.size(), replay::kMaxShownFrames + 1);
  EXPECT_EQ(cut[replay::kMaxShownFrames - 1].offset, 0xA000 + kDepth - replay::kMaxShownFrames + 1);
  EXPECT_TRUE(cut.back().is_truncation());
  EXPECT_EQ(stacks.frames(deepest->stack, kDepth).size(), kDepth) << "not cut when it fits";
}

TEST_F(Replay, FramesInsideTheTracerAreDropped) {
  TraceBuilder b;
  b.modules_begin(1);
  b.module(0x400000, 0x400000, 0x500000, "/usr/bin/app", "");
  b.module(0x7f0000000000, 0x7f0000000000, 0x7f0000100000, "/opt/gpumemtrace/lib/libgpumemtrace.so", "");
  b.thread_new(1, 100, "main");
  b.stack_node(0, 0x401000).stack_node(1, 0x7f0000001000);
  b.alloc(Api::cudaMalloc, 0, 0x1000000, kMiB, 2, 1000);
  b.end(1, 1000);
  analysis::Analysis a = analyze(b);
  const replay::Replay& r = *a.replay;
  ASSERT_EQ(r.sites().size(), 1u);
  auto frames = r.stacks().frames(r.sites()[0].stack);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(r.stacks().modules()[frames[0].module].path, "/usr/bin/app");
  EXPECT_EQ(frames[0].offset, 0x1000u);
}

TEST_F(Replay, ATruncatedTraceIsReadUpToItsLastEventAndFlagged) {
  TraceBuilder b = three_stacks();
  b.alloc(Api::cudaMalloc, 0, 0x1000000, kMiB, 1, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x2000000, 2 * kMiB, 2, 1000);
  std::vector<uint8_t> bytes = b.bytes();
  bytes.pop_back();  // the last alloc is cut
  analysis::Analysis a = analysis::analyze(write_file(scratch_ / "cut.trace", bytes, 4096));
  EXPECT_FALSE(a.trace.complete);
  EXPECT_FALSE(a.trace.corrupt);
  EXPECT_EQ(a.replay->accounts().find_device(0)->live_bytes, kMiB);
  EXPECT_EQ(a.replay->end_time_ns(), 2000u);
}

}  // namespace
}  // namespace gpumemtrace::test
