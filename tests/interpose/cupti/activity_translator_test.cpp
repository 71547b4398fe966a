// The CUPTI translator with activity records built from the real CUPTI 13 header structs: the correlation
// join, the deduplication against the interposition hooks, order and lateness, pools.
#include "common/size_units.h"
#include "interpose/cupti/activity_translator.h"

#include <gtest/gtest.h>

#include "interpose/cupti/memory_callbacks.h"

namespace gpumemtrace::interpose::cupti {
namespace {

using format::Api;

const CallOrigin kOrigin{3, 42, 1, 1};  // thread 3, stack 42

CUpti_ActivityMemory4 memory(CUpti_ActivityMemoryOperationType op, CUpti_ActivityMemoryKind kind, uint32_t correlation,
                             uint64_t address, uint64_t bytes, uint64_t timestamp) {
  CUpti_ActivityMemory4 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType = op;
  r.memoryKind = kind;
  r.correlationId = correlation;
  r.address = address;
  r.bytes = bytes;
  r.timestamp = timestamp;
  r.deviceId = 1;
  r.streamId = 7;
  return r;
}
CUpti_ActivityMemory4 device_alloc(uint32_t correlation, uint64_t address, uint64_t bytes, uint64_t timestamp) {
  return memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, correlation,
                address, bytes, timestamp);
}
CUpti_ActivityMemory4 device_free(uint32_t correlation, uint64_t address, uint64_t bytes, uint64_t timestamp) {
  return memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, correlation, address,
                bytes, timestamp);
}
CUpti_ActivityMemory4 async(CUpti_ActivityMemory4 r, uint64_t pool, uint64_t pool_size, uint64_t utilized,
                            uint64_t threshold) {
  r.isAsync = 1;
  r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  r.memoryPoolConfig.address = pool;
  r.memoryPoolConfig.pool.size = pool_size;
  r.memoryPoolConfig.utilizedSize = utilized;
  r.memoryPoolConfig.releaseThreshold = threshold;
  return r;
}
CUpti_ActivityMemoryPool3 pool_record(CUpti_ActivityMemoryPoolOperationType op, uint32_t correlation, uint64_t pool,
                                      uint64_t size, uint64_t utilized, uint64_t threshold, uint64_t timestamp) {
  CUpti_ActivityMemoryPool3 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  r.memoryPoolOperationType = op;
  r.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  r.correlationId = correlation;
  r.deviceId = 0;
  r.address = pool;
  r.size = size;
  r.utilizedSize = utilized;
  r.releaseThreshold = threshold;
  r.timestamp = timestamp;
  return r;
}

ApiCall call(uint32_t correlation, std::optional<Api> api, bool interposed = false) {
  return ApiCall{correlation, api, interposed ? CallOrigin{} : kOrigin, interposed};
}

template <typename R>
const R& as(const TranslatedEvent& event) {
  EXPECT_TRUE(std::holds_alternative<R>(event.record)) << "record #" << event.record.index();
  return std::get<R>(event.record);
}

std::vector<TranslatedEvent> ready(ActivityTranslator& translator) {
  std::vector<TranslatedEvent> out;
  translator.emit_ready(out);
  return out;
}

TEST(ActivityTranslator, AnAllocationJoinedToItsCallCarriesTheCallsStackAndThread) {
  ActivityTranslator t;
  t.on_call(call(7, Api::cuMemAlloc));
  t.on_memory(device_alloc(7, 0x7f0000001000, 4096, 1000));
  std::vector<TranslatedEvent> out = ready(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as<trace::Alloc>(out[0]), (trace::Alloc{{1000, 0}, Api::cuMemAlloc, 1, 0x7f0000001000, 4096, 42, 0, 0}));
  EXPECT_EQ(out[0].origin, kOrigin);
  EXPECT_EQ(t.counts().joined, 1u);
  EXPECT_EQ(t.calls_waiting(), 0u);
}

TEST(ActivityTranslator, ACallTheHooksRecordedLeavesExactlyOneEvent) {
  // The interposition hooks wrote the cuMemAlloc of correlation 7 themselves; CUPTI's copy is dropped. The
  // allocation of correlation 8, which no hook saw, is written.
  ActivityTranslator t;
  t.on_call(call(7, Api::cuMemAlloc, true));
  t.on_call(call(8, Api::cuMemAlloc));
  t.on_memory(device_alloc(7, 0x1000, 256, 10));
  t.on_memory(device_alloc(8, 0x2000, 512, 20));
  t.on_call(call(9, Api::cuMemFree, true));  // the hooks recorded the free too
  t.on_memory(device_free(9, 0x1000, 256, 30));
  std::vector<TranslatedEvent> out = ready(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as<trace::Alloc>(out[0]).address, 0x2000u);
  EXPECT_EQ(t.counts().deduplicated, 2u);
  EXPECT_EQ(t.counts().joined, 1u);
  EXPECT_EQ(t.records_waiting(), 0u);
}

TEST(ActivityTranslator, ARecordDeliveredBeforeItsCallWaitsForIt) {
  ActivityTranslator t;
  t.on_memory(device_alloc(11, 0x3000, 1 * kMiB, 50));
  EXPECT_TRUE(ready(t).empty());
  t.on_call(call(11, Api::cuMemAllocPitch));
  std::vector<TranslatedEvent> out = ready(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as<trace::Alloc>(out[0]).api, Api::cuMemAllocPitch);
  EXPECT_EQ(as<trace::Alloc>(out[0]).stack, 42u);
}

TEST(ActivityTranslator, ARecordWhoseCallNeverCameIsWrittenWithoutAStackAfterTheWait) {
  ActivityTranslator t;
  t.on_memory(device_alloc(12, 0x4000, 64, 60));
  for (unsigned round = 0; round < ActivityTranslator::kWaitRounds; ++round) EXPECT_TRUE(ready(t).empty());
  std::vector<TranslatedEvent> out = ready(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as<trace::Alloc>(out[0]).stack, 0u);
  EXPECT_EQ(out[0].origin, CallOrigin{});
  EXPECT_EQ(t.counts().unjoined, 1u);
}

TEST(ActivityTranslator, BuffersDeliveredOutOfOrderAreWrittenInTimeOrder) {
  // The buffer with the free (t=200) is delivered before the one with its allocation (t=100).
  ActivityTranslator t;
  t.on_call(call(1, Api::cuMemAlloc));
  t.on_call(call(2, Api::cuMemFree));
  t.on_memory(device_free(2, 0x5000, 128, 200));
  EXPECT_TRUE(ready(t).empty()) << "a free waits for its allocation";
  t.on_memory(device_alloc(1, 0x5000, 128, 100));
  std::vector<TranslatedEvent> out = ready(t);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(as<trace::Alloc>(out[0]).time_ns, 100u);
  EXPECT_EQ(as<trace::Free>(out[1]), (trace::Free{{200, 0}, Api::cuMemFree, 0x5000, 0}));
  EXPECT_EQ(t.counts().joined, 2u);
}

TEST(ActivityTranslator, ALateBufferStillFindsItsCall) {
  // Call 5's record comes after many batches of other records: the call is kept until its record arrives.
  ActivityTranslator t;
  t.on_call(call(5, Api::cuMemAllocManaged));
  for (uint32_t i = 0; i < 10; ++i) {
    t.on_call(call(100 + i, Api::cuMemAlloc));
    t.on_memory(device_alloc(100 + i, 0x10000 + i * 0x100, 16, 1000 + i));
    EXPECT_EQ(ready(t).size(), 1u);
  }
  t.on_memory(memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 5, 0x9000,
                     2 * kMiB, 990));
  std::vector<TranslatedEvent> out = ready(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as<trace::Alloc>(out[0]), (trace::Alloc{{990, 0}, Api::cuMemAllocManaged, 1, 0x9000, 2 * kMiB, 42, 0, 0}));
  EXPECT_EQ(t.calls_waiting(), 0u);
}

TEST(ActivityTranslator, AsyncAllocationsFromAPoolCarryStreamPoolAndThePoolsFigures) {
  constexpr uint64_t kPool = 0xabc000;
  ActivityTranslator t;
  t.on_call(call(20, Api::cuMemAllocFromPoolAsync));
  t.on_call(call(21, Api::cuMemFreeAsync));
  t.on_memory(async(device_alloc(20, 0x8000, 3 * kMiB, 300), kPool, 32 * kMiB, 3 * kMiB, 64 * kMiB));
  t.on_memory(async(device_free(21, 0x8000, 3 * kMiB, 400), kPool, 32 * kMiB, 0, 64 * kMiB));
  std::vector<TranslatedEvent> out = ready(t);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(as<trace::PoolThreshold>(out[0]), (trace::PoolThreshold{{300, 0}, kPool, 64 * kMiB}));
  EXPECT_EQ(as<trace::Alloc>(out[1]),
            (trace::Alloc{{300, 0}, Api::cuMemAllocFromPoolAsync, 1, 0x8000, 3 * kMiB, 42, 7, kPool}));
  EXPECT_EQ(as<trace::Free>(out[2]), (trace::Free{{400, 0}, Api::cuMemFreeAsync, 0x8000, 7}));
  // One usage record per batch and pool, with the pool's last figures: 32 MiB kept, nothing used.
  EXPECT_EQ(as<trace::PoolUsage>(out[3]), (trace::PoolUsage{{400, 0}, kPool, 1, 32 * kMiB, 0}));
  EXPECT_TRUE(ready(t).empty()) << "nothing changed: no usage record again";
}

TEST(ActivityTranslator, PoolCreateTrimDestroy) {
  constexpr uint64_t kPool = 0xdef000;
  ActivityTranslator t;
  t.on_call(call(30, std::nullopt));
  t.on_call(call(31, std::nullopt));
  t.on_call(call(32, std::nullopt));
  t.on_pool(pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, 30, kPool, 0, 0, 16 * kMiB, 10));
  CUpti_ActivityMemoryPool3 trim =
      pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, 31, kPool, 4 * kMiB, 2 * kMiB, 16 * kMiB, 20);
  trim.minBytesToKeep = 4 * kMiB;
  t.on_pool(trim);
  t.on_pool(pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED, 32, kPool, 0, 0, 16 * kMiB, 30));
  std::vector<TranslatedEvent> out = ready(t);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(as<trace::PoolCreate>(out[0]), (trace::PoolCreate{{{10, 0}, kPool, 0}}));
  EXPECT_EQ(as<trace::PoolThreshold>(out[1]), (trace::PoolThreshold{{10, 0}, kPool, 16 * kMiB}));
  EXPECT_EQ(as<trace::PoolTrim>(out[2]), (trace::PoolTrim{{20, 0}, kPool, 4 * kMiB, 4 * kMiB, 2 * kMiB}));
  EXPECT_EQ(as<trace::PoolDestroy>(out[3]), (trace::PoolDestroy{{{30, 0}, kPool, 0}}));
  EXPECT_EQ(out[0].origin, kOrigin);
  EXPECT_EQ(t.counts().joined, 3u);
}

TEST(ActivityTranslator, APoolTheHooksCreatedStillGetsItsThresholdOnce) {
  constexpr uint64_t kPool = 0x1234000;
  ActivityTranslator t;
  t.on_call(call(40, std::nullopt, true));
  t.on_pool(pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, 40, kPool, 0, 0, 8 * kMiB, 10));
  std::vector<TranslatedEvent> out = ready(t);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as<trace::PoolThreshold>(out[0]).release_threshold, 8 * kMiB);
  EXPECT_EQ(t.counts().deduplicated, 1u);
}

TEST(ActivityTranslator, KindsOfMemoryTheTraceDoesNotFollowAreIgnored) {
  ActivityTranslator t;
  for (auto kind : {CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC,
                    CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC, CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN})
    t.on_memory(memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, kind, 0, 0x1000, 8, 1));
  std::vector<TranslatedEvent> out;
  t.emit_all(out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(t.counts().ignored, 4u);
}

TEST(ActivityTranslator, PinnedHostMemoryHasNoDeviceAndAFreeOfManagedMemoryIsCuMemFree) {
  ActivityTranslator t;
  t.on_call(call(50, Api::cuMemAllocHost));
  t.on_call(call(51, Api::cuMemAllocManaged));
  t.on_call(call(52, Api::cuMemFree));
  t.on_memory(memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 50, 0xa000,
                     100, 1));
  t.on_memory(memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 51, 0xb000,
                     200, 2));
  t.on_memory(memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 52, 0xb000,
                     200, 3));
  std::vector<TranslatedEvent> out = ready(t);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(as<trace::Alloc>(out[0]), (trace::Alloc{{1, 0}, Api::cuMemAllocHost, trace::kNoDevice, 0xa000, 100, 42, 0, 0}));
  EXPECT_EQ(as<trace::Alloc>(out[1]).api, Api::cuMemAllocManaged);
  EXPECT_EQ(as<trace::Free>(out[2]).api, Api::cuMemFree);
}

TEST(ActivityTranslator, EmitAllWritesWhatIsStillWaiting) {
  ActivityTranslator t;
  t.on_memory(device_free(60, 0xc000, 8, 5));  // no call, no allocation seen: freed memory from before CUPTI
  EXPECT_TRUE(ready(t).empty());
  std::vector<TranslatedEvent> out;
  t.emit_all(out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as<trace::Free>(out[0]).address, 0xc000u);
  EXPECT_EQ(t.records_waiting(), 0u);
}

TEST(ActivityTranslator, TakesRecordsThroughTheirCommonHeader) {
  ActivityTranslator t;
  CUpti_ActivityMemory4 alloc = device_alloc(70, 0xd000, 32, 1);
  CUpti_ActivityMemoryPool3 pool = pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, 71, 0xe000, 0, 0, 0, 2);
  CUpti_ActivityAPI other{};
  other.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  t.on_activity(reinterpret_cast<const CUpti_Activity*>(&alloc));
  t.on_activity(reinterpret_cast<const CUpti_Activity*>(&pool));
  t.on_activity(reinterpret_cast<const CUpti_Activity*>(&other));
  std::vector<TranslatedEvent> out;
  t.emit_all(out);
  ASSERT_EQ(out.size(), 3u);  // the allocation, the pool's creation and its threshold
  EXPECT_TRUE(std::holds_alternative<trace::Alloc>(out[0].record));
  EXPECT_TRUE(std::holds_alternative<trace::PoolCreate>(out[1].record));
  EXPECT_TRUE(std::holds_alternative<trace::PoolThreshold>(out[2].record));
}

TEST(MemoryCallbacks, EachMemoryCallbackHasItsApiAndOthersAreNotMemoryCalls) {
  ASSERT_NE(find_memory_callback(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2), nullptr);
  EXPECT_EQ(find_memory_callback(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2)->api, Api::cuMemAlloc);
  EXPECT_EQ(find_memory_callback(CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz)->api, Api::cuMemFreeAsync);
  ASSERT_NE(find_memory_callback(CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo), nullptr);
  EXPECT_FALSE(find_memory_callback(CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo)->api);
  EXPECT_EQ(find_memory_callback(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel), nullptr);
  EXPECT_EQ(memory_callbacks().size(), 20u);
}

}  // namespace
}  // namespace gpumemtrace::interpose::cupti
