// The hot path (cuMemAlloc/cuMemFree, and stream-ordered allocation from a warm pool) makes no heap allocation
// once warm: this binary counts malloc calls (every operator new ends in malloc).
#include <atomic>
#include <cstdlib>
#include <vector>

#include "sim_test.h"

extern "C" void* __libc_malloc(size_t size);

namespace {
std::atomic<bool> counting{false};
std::atomic<long> malloc_calls{0};
}  // namespace

extern "C" void* malloc(size_t size) {
  if (counting.load(std::memory_order_relaxed)) malloc_calls.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}

namespace gpumemtrace::sim::test {
namespace {

using HotPathTest = SimTest;

void churn(int rounds) {
  for (int i = 0; i < rounds; i++) {
    CUdeviceptr a = 0, b = 0, c = 0, d = 0;
    ASSERT_CU(cuMemAlloc(&a, 512 * (1 + i % 5)));
    ASSERT_CU(cuMemAlloc(&b, 3 * MiB));
    ASSERT_CU(cuMemAllocAsync(&c, 4096 * (1 + i % 3), nullptr));
    ASSERT_CU(cuMemAllocAsync(&d, 1 * MiB, nullptr));
    ASSERT_CU(cuMemFree(b));
    ASSERT_CU(cuMemFreeAsync(c, nullptr));
    ASSERT_CU(cuMemFree(a));
    ASSERT_CU(cuMemFreeAsync(d, nullptr));
  }
}

TEST_F(HotPathTest, WarmAllocationsAndFreesDoNotCallMalloc) {
  CUmemoryPool pool = nullptr;
  ASSERT_CU(cuDeviceGetDefaultMemPool(&pool, 0));
  churn(20);  // warm-up: size classes, map nodes, the pool's reservation
  counting = true;
  churn(1000);
  counting = false;
  EXPECT_EQ(malloc_calls.load(), 0);
  // The counter does see allocations.
  counting = true;
  auto* probe = new std::vector<int>(100);
  counting = false;
  delete probe;
  EXPECT_GT(malloc_calls.load(), 0);
  ASSERT_CU(cuMemPoolTrimTo(pool, 0));
}

}  // namespace
}  // namespace gpumemtrace::sim::test
