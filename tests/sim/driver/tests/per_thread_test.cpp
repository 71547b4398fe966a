// Built like `nvcc --default-stream per-thread` code (CUDA_API_PER_THREAD_DEFAULT_STREAM): cuda.h maps the calls
// below to the _ptsz/_ptds exports.
#include <vector>

#include "sim_test.h"

namespace gpumemtrace::sim::test {
namespace {

using PerThreadTest = SimTest;

TEST_F(PerThreadTest, StreamOrderedAllocationAndCopies) {
  CUmemoryPool pool = nullptr;
  ASSERT_CU(cuDeviceGetDefaultMemPool(&pool, 0));
  const uint64_t before = free_bytes();
  CUdeviceptr p = 0, q = 0;
  ASSERT_CU(cuMemAllocAsync(&p, 1 * MiB, CU_STREAM_PER_THREAD));      // cuMemAllocAsync_ptsz
  ASSERT_CU(cuMemAllocFromPoolAsync(&q, 1 * MiB, pool, nullptr));      // cuMemAllocFromPoolAsync_ptsz
  EXPECT_EQ(free_bytes(), before - 2 * MiB);
  ASSERT_CU(cuMemsetD8Async(p, 0x5a, 1 * MiB, nullptr));               // cuMemsetD8Async_ptsz
  ASSERT_CU(cuMemcpyAsync(q, p, 1 * MiB, nullptr));                    // cuMemcpyAsync_ptsz
  std::vector<unsigned char> out(1 * MiB);
  ASSERT_CU(cuMemcpyDtoH(out.data(), q, out.size()));                  // cuMemcpyDtoH_v2_ptds
  EXPECT_EQ(out[0], 0x5a);
  EXPECT_EQ(out.back(), 0x5a);
  ASSERT_CU(cuMemFreeAsync(p, nullptr));                               // cuMemFreeAsync_ptsz
  ASSERT_CU(cuMemFreeAsync(q, nullptr));
  ASSERT_CU(cuStreamSynchronize(nullptr));                             // cuStreamSynchronize_ptsz
  EXPECT_EQ(free_bytes(), before);
}

}  // namespace
}  // namespace gpumemtrace::sim::test
