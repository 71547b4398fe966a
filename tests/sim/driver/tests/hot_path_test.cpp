// The hot path (cuMemAlloc/cuMemFree, and stream-ordered allocation from a warm pool) makes no heap allocation
// once warm: this binary counts malloc calls (every operator new ends in malloc).
#include <atomic>
#include <cstdlib>
#include <vector>

#include "sim_test.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> malloc_calls{0};

void count_malloc() {
  if (counting.load(std::memory_order_relaxed)) malloc_calls.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// A sanitizer's runtime owns malloc (and calls it before it is set up, where a replacement crashed: the
// asan preset's sim_driver_tests died at start): its allocator reports each allocation to hooks instead
// (both must be given).
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*on_malloc)(const volatile void*, size_t),
                                                         void (*on_free)(const volatile void*));
namespace {
const int hooks_installed =
    __sanitizer_install_malloc_and_free_hooks([](const volatile void*, size_t) { count_malloc(); },
                                              [](const volatile void*) {});
}  // namespace
#else
extern "C" void* __libc_malloc(size_t size);

extern "C" void* malloc(size_t size) {
  count_malloc();
  return __libc_malloc(size);
}
#endif

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
