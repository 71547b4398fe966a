// Stream-ordered allocation and memory pools: reserved vs used, 2 MiB reservations, reuse, trimming, the release
// threshold at synchronization, out of memory, custom pools.
#include "sim_test.h"

namespace gpumemtrace::sim::test {
namespace {

class PoolTest : public SimTest {
 protected:
  void SetUp() override {
    SimTest::SetUp();
    ASSERT_CU(cuDeviceGetDefaultMemPool(&pool_, 0));
    ASSERT_CU(cuMemPoolTrimTo(pool_, 0));
    cuuint64_t zero = 0;
    ASSERT_CU(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero));
    ASSERT_CU(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero));
    ASSERT_CU(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero));
  }
  uint64_t attr(CUmemPool_attribute a, CUmemoryPool pool = nullptr) {
    cuuint64_t v = 0;
    EXPECT_CU(cuMemPoolGetAttribute(pool ? pool : pool_, a, &v));
    return v;
  }
  uint64_t reserved(CUmemoryPool pool = nullptr) { return attr(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, pool); }
  uint64_t used(CUmemoryPool pool = nullptr) { return attr(CU_MEMPOOL_ATTR_USED_MEM_CURRENT, pool); }
  CUmemoryPool pool_ = nullptr;
};

TEST_F(PoolTest, ReservesIn2MiBAndKeepsFreedMemory) {
  const uint64_t before = free_bytes();
  CUdeviceptr a = 0, b = 0, c = 0;
  ASSERT_CU(cuMemAllocAsync(&a, 1 * MiB, nullptr));
  EXPECT_EQ(reserved(), 2 * MiB);
  EXPECT_EQ(used(), 1 * MiB);
  EXPECT_EQ(free_bytes(), before - 2 * MiB);
  ASSERT_CU(cuMemAllocAsync(&b, 1000, nullptr));  // fits in the first reservation
  EXPECT_EQ(reserved(), 2 * MiB);
  EXPECT_EQ(used(), 1 * MiB + 1000);
  ASSERT_CU(cuMemAllocAsync(&c, 3 * MiB, nullptr));  // a new 4 MiB reservation
  EXPECT_EQ(reserved(), 6 * MiB);
  EXPECT_EQ(free_bytes(), before - 6 * MiB);
  ASSERT_CU(cuMemFreeAsync(a, nullptr));
  ASSERT_CU(cuMemFreeAsync(b, nullptr));
  ASSERT_CU(cuMemFreeAsync(c, nullptr));
  EXPECT_EQ(used(), 0u);
  EXPECT_EQ(reserved(), 6 * MiB);  // kept until a synchronization or a trim
  EXPECT_EQ(free_bytes(), before - 6 * MiB);
  EXPECT_EQ(attr(CU_MEMPOOL_ATTR_USED_MEM_HIGH), 4 * MiB + 1000);
  EXPECT_EQ(attr(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 6 * MiB);
  // A freed block of the same size is reused without a new reservation.
  CUdeviceptr d = 0;
  ASSERT_CU(cuMemAllocAsync(&d, 3 * MiB, nullptr));
  EXPECT_EQ(d, c);
  EXPECT_EQ(reserved(), 6 * MiB);
  ASSERT_CU(cuMemFreeAsync(d, nullptr));
  ASSERT_CU(cuStreamSynchronize(nullptr));
  EXPECT_EQ(reserved(), 0u);
  EXPECT_EQ(free_bytes(), before);
}

TEST_F(PoolTest, TrimKeepsAtLeastTheRequestedBytes) {
  CUdeviceptr a = 0, b = 0, c = 0;
  ASSERT_CU(cuMemAllocAsync(&a, 2 * MiB, nullptr));
  ASSERT_CU(cuMemAllocAsync(&b, 4 * MiB, nullptr));
  ASSERT_CU(cuMemAllocAsync(&c, 2 * MiB, nullptr));
  EXPECT_EQ(reserved(), 8 * MiB);
  ASSERT_CU(cuMemFreeAsync(a, nullptr));
  ASSERT_CU(cuMemFreeAsync(b, nullptr));
  ASSERT_CU(cuMemPoolTrimTo(pool_, 5 * MiB));  // releases unused reservations until reserved <= 5 MiB
  EXPECT_LE(reserved(), 5 * MiB);
  EXPECT_GE(reserved(), 2 * MiB);  // c is still live
  ASSERT_CU(cuMemPoolTrimTo(pool_, 0));
  EXPECT_EQ(reserved(), 2 * MiB);
  EXPECT_EQ(used(), 2 * MiB);
  ASSERT_CU(cuMemFreeAsync(c, nullptr));
  ASSERT_CU(cuMemPoolTrimTo(pool_, 0));
  EXPECT_EQ(reserved(), 0u);
}

TEST_F(PoolTest, ReleaseThresholdAppliesAtSynchronization) {
  cuuint64_t threshold = 4 * MiB;
  ASSERT_CU(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  cuuint64_t back = 0;
  ASSERT_CU(cuMemPoolGetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &back));
  EXPECT_EQ(back, threshold);
  CUstream stream = nullptr;
  ASSERT_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr p[4];
  for (auto& x : p) ASSERT_CU(cuMemAllocAsync(&x, 2 * MiB, stream));
  EXPECT_EQ(reserved(), 8 * MiB);
  for (auto x : p) ASSERT_CU(cuMemFreeAsync(x, stream));
  EXPECT_EQ(reserved(), 8 * MiB);
  ASSERT_CU(cuStreamSynchronize(stream));
  EXPECT_EQ(reserved(), 4 * MiB);
  // Context and event synchronization release too.
  threshold = 2 * MiB;
  ASSERT_CU(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  CUevent event = nullptr;
  ASSERT_CU(cuEventCreate(&event, 0));
  ASSERT_CU(cuEventRecord(event, stream));
  ASSERT_CU(cuEventSynchronize(event));
  EXPECT_EQ(reserved(), 2 * MiB);
  threshold = 0;
  ASSERT_CU(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  ASSERT_CU(cuCtxSynchronize());
  EXPECT_EQ(reserved(), 0u);
  ASSERT_CU(cuEventDestroy(event));
  ASSERT_CU(cuStreamDestroy(stream));
}

TEST_F(PoolTest, OutOfMemoryReleasesCachedBlocksFirst) {
  const uint64_t before = free_bytes();
  CUdeviceptr small = 0, big = 0;
  ASSERT_CU(cuMemAllocAsync(&small, 64 * MiB, nullptr));
  ASSERT_CU(cuMemFreeAsync(small, nullptr));
  EXPECT_EQ(reserved(), 64 * MiB);
  // All the free memory is needed: the pool gives its cached 64 MiB back first.
  ASSERT_CU(cuMemAllocAsync(&big, before, nullptr));
  EXPECT_EQ(reserved(), before);
  EXPECT_EQ(free_bytes(), 0u);
  CUdeviceptr none = 0;
  EXPECT_EQ(cuMemAllocAsync(&none, 1 * MiB, nullptr), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(reserved(), before);
  ASSERT_CU(cuMemFreeAsync(big, nullptr));
  ASSERT_CU(cuMemPoolTrimTo(pool_, 0));
  EXPECT_EQ(free_bytes(), before);
  EXPECT_EQ(cuMemAllocAsync(&none, before + 1, nullptr), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(reserved(), 0u);
}

TEST_F(PoolTest, CustomPoolsAndTheCurrentPool) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  props.maxSize = 8 * MiB;
  CUmemoryPool pool = nullptr;
  ASSERT_CU(cuMemPoolCreate(&pool, &props));
  const uint64_t before = free_bytes();
  CUdeviceptr a = 0, b = 0;
  ASSERT_CU(cuMemAllocFromPoolAsync(&a, 5 * MiB, pool, nullptr));
  EXPECT_EQ(reserved(pool), 6 * MiB);
  EXPECT_EQ(reserved(), 0u);
  EXPECT_EQ(cuMemAllocFromPoolAsync(&b, 3 * MiB, pool, nullptr), CUDA_ERROR_OUT_OF_MEMORY);  // over maxSize
  // cuMemAllocAsync uses the device's current pool.
  ASSERT_CU(cuDeviceSetMemPool(0, pool));
  CUmemoryPool current = nullptr;
  ASSERT_CU(cuDeviceGetMemPool(&current, 0));
  EXPECT_EQ(current, pool);
  ASSERT_CU(cuMemAllocAsync(&b, 512, nullptr));
  EXPECT_EQ(used(pool), 5 * MiB + 512);
  CUmemoryPool owner = nullptr;
  ASSERT_CU(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, b));
  EXPECT_EQ(owner, pool);
  // Destroying a pool with live allocations defers its release to their frees.
  ASSERT_CU(cuMemPoolDestroy(pool));
  ASSERT_CU(cuDeviceGetMemPool(&current, 0));
  EXPECT_EQ(current, pool_);
  EXPECT_EQ(free_bytes(), before - 6 * MiB);
  ASSERT_CU(cuMemFreeAsync(a, nullptr));
  ASSERT_CU(cuMemFreeAsync(b, nullptr));
  EXPECT_EQ(free_bytes(), before);
  EXPECT_EQ(cuMemPoolDestroy(pool_), CUDA_ERROR_INVALID_VALUE);  // the default pool stays
}

TEST_F(PoolTest, Cuda13MemPoolEntryPoints) {
  CUmemLocation location{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemoryPool pool = nullptr;
  ASSERT_CU(cuMemGetDefaultMemPool(&pool, &location, CU_MEM_ALLOCATION_TYPE_PINNED));
  EXPECT_EQ(pool, pool_);
  ASSERT_CU(cuMemGetMemPool(&pool, &location, CU_MEM_ALLOCATION_TYPE_PINNED));
  EXPECT_EQ(pool, pool_);
  ASSERT_CU(cuMemSetMemPool(&location, CU_MEM_ALLOCATION_TYPE_PINNED, pool_));
  location.type = CU_MEM_LOCATION_TYPE_HOST;
  EXPECT_EQ(cuMemGetDefaultMemPool(&pool, &location, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_ERROR_NOT_SUPPORTED);
}

TEST_F(PoolTest, HighWaterMarksResetOnlyToCurrent) {
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAllocAsync(&p, 3 * MiB, nullptr));
  ASSERT_CU(cuMemFreeAsync(p, nullptr));
  EXPECT_EQ(attr(CU_MEMPOOL_ATTR_USED_MEM_HIGH), 3 * MiB);
  cuuint64_t v = 1;
  EXPECT_EQ(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v), CUDA_ERROR_INVALID_VALUE);
  v = 0;
  ASSERT_CU(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
  EXPECT_EQ(attr(CU_MEMPOOL_ATTR_USED_MEM_HIGH), 0u);
  EXPECT_EQ(attr(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 4 * MiB);
  ASSERT_CU(cuMemPoolTrimTo(pool_, 0));
  ASSERT_CU(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &v));
  EXPECT_EQ(attr(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 0u);
}

}  // namespace
}  // namespace gpumemtrace::sim::test
