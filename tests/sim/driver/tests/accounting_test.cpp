// Device memory accounting: cuMemAlloc/cuMemFree against cuMemGetInfo, out of memory, other processes' memory,
// what does not count, address reuse, and concurrency.
#include <cstring>
#include <thread>
#include <vector>

#include "sim_test.h"

namespace gpumemtrace::sim::test {
namespace {

using AccountingTest = SimTest;

TEST_F(AccountingTest, ReportsCapacityAndFree) {
  size_t free = 0, total = 0;
  ASSERT_CU(cuMemGetInfo(&free, &total));
  EXPECT_EQ(total, kCapacity);
  EXPECT_EQ(free, kCapacity - kOthers[0]);
  size_t device_total = 0;
  ASSERT_CU(cuDeviceTotalMem(&device_total, 0));
  EXPECT_EQ(device_total, kCapacity);
}

TEST_F(AccountingTest, AllocationsRoundUpTo512Bytes) {
  const uint64_t before = free_bytes();
  CUdeviceptr a = 0, b = 0, c = 0;
  ASSERT_CU(cuMemAlloc(&a, 1));
  EXPECT_EQ(free_bytes(), before - 512);
  ASSERT_CU(cuMemAlloc(&b, 1000));
  EXPECT_EQ(free_bytes(), before - 512 - 1024);
  ASSERT_CU(cuMemAlloc(&c, 3 * MiB));
  EXPECT_EQ(free_bytes(), before - 512 - 1024 - 3 * MiB);
  EXPECT_EQ(a % 512, 0u);
  EXPECT_EQ(b % 512, 0u);
  EXPECT_EQ(c % 512, 0u);
  ASSERT_CU(cuMemFree(b));
  EXPECT_EQ(free_bytes(), before - 512 - 3 * MiB);
  ASSERT_CU(cuMemFree(a));
  ASSERT_CU(cuMemFree(c));
  EXPECT_EQ(free_bytes(), before);
}

TEST_F(AccountingTest, OutOfMemoryChangesNothing) {
  const uint64_t before = free_bytes();
  CUdeviceptr p = 0xdead;
  EXPECT_EQ(cuMemAlloc(&p, before + 1), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(p, 0xdeadu);
  EXPECT_EQ(free_bytes(), before);
  // Exactly what is free fits, and then nothing does.
  ASSERT_CU(cuMemAlloc(&p, before));
  EXPECT_EQ(free_bytes(), 0u);
  CUdeviceptr q = 0;
  EXPECT_EQ(cuMemAlloc(&q, 1), CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_CU(cuMemFree(p));
  EXPECT_EQ(free_bytes(), before);
}

TEST_F(AccountingTest, RequestsNearTwoToTheSixtyFourAreOutOfMemory) {
  const uint64_t before = free_bytes();
  for (size_t size : {SIZE_MAX, SIZE_MAX - 100, SIZE_MAX - 511}) {
    CUdeviceptr p = 7;
    EXPECT_EQ(cuMemAlloc(&p, size), CUDA_ERROR_OUT_OF_MEMORY) << size;
    EXPECT_EQ(p, 7u);
  }
  EXPECT_EQ(free_bytes(), before);
}

TEST_F(AccountingTest, CopiesFromOrToNullAreInvalid) {
  CUdeviceptr a = 0;
  ASSERT_CU(cuMemAlloc(&a, 4096));
  EXPECT_EQ(cuMemcpy(a, 0, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpy(0, a, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyAsync(a, 0, 16, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_CU(cuMemFree(a));
}

TEST_F(AccountingTest, OtherProcessesMemoryLowersFreeOnItsDevice) {
  use_device(1);
  size_t free = 0, total = 0;
  ASSERT_CU(cuMemGetInfo(&free, &total));
  EXPECT_EQ(total, kCapacity);
  EXPECT_EQ(free, kCapacity - kOthers[1]);
  CUdeviceptr p = 0;
  EXPECT_EQ(cuMemAlloc(&p, kCapacity - kOthers[1] + 512), CUDA_ERROR_OUT_OF_MEMORY);
}

TEST_F(AccountingTest, DevicesAreAccountedSeparately) {
  const uint64_t free0 = free_bytes();
  CUdeviceptr p0 = 0, p1 = 0;
  ASSERT_CU(cuMemAlloc(&p0, 10 * MiB));
  use_device(1);
  const uint64_t free1 = free_bytes();
  ASSERT_CU(cuMemAlloc(&p1, 3 * MiB));
  EXPECT_EQ(free_bytes(), free1 - 3 * MiB);
  // A pointer is freed on its own device whatever the current context.
  ASSERT_CU(cuMemFree(p0));
  EXPECT_EQ(free_bytes(), free1 - 3 * MiB);
  ASSERT_CU(cuMemFree(p1));
  EXPECT_EQ(free_bytes(), free1);
  use_device(0);
  EXPECT_EQ(free_bytes(), free0);
}

TEST_F(AccountingTest, PitchAllocationsCountPitchTimesHeight) {
  const uint64_t before = free_bytes();
  CUdeviceptr p = 0;
  size_t pitch = 0;
  ASSERT_CU(cuMemAllocPitch(&p, &pitch, 1000, 10, 4));
  EXPECT_EQ(pitch, 1024u);
  EXPECT_EQ(free_bytes(), before - 10 * 1024);
  EXPECT_EQ(cuMemAllocPitch(&p, &pitch, 1000, 10, 3), CUDA_ERROR_INVALID_VALUE);
  ASSERT_CU(cuMemFree(p));
  EXPECT_EQ(free_bytes(), before);
}

TEST_F(AccountingTest, ManagedAndHostMemoryDoNotCount) {
  const uint64_t before = free_bytes();
  CUdeviceptr managed = 0;
  void* pinned = nullptr;
  void* host = nullptr;
  ASSERT_CU(cuMemAllocManaged(&managed, 64 * MiB, CU_MEM_ATTACH_GLOBAL));
  ASSERT_CU(cuMemHostAlloc(&pinned, 64 * MiB, CU_MEMHOSTALLOC_DEVICEMAP));
  ASSERT_CU(cuMemAllocHost(&host, 1000));
  EXPECT_EQ(free_bytes(), before);
  std::memset(reinterpret_cast<void*>(managed), 1, 4096);
  std::memset(pinned, 2, 4096);
  CUdeviceptr mapped = 0;
  ASSERT_CU(cuMemHostGetDevicePointer(&mapped, pinned, 0));
  EXPECT_EQ(mapped, reinterpret_cast<CUdeviceptr>(pinned));
  unsigned int flags = 0;
  ASSERT_CU(cuMemHostGetFlags(&flags, pinned));
  EXPECT_EQ(flags, unsigned{CU_MEMHOSTALLOC_DEVICEMAP});
  EXPECT_EQ(cuMemFree(reinterpret_cast<CUdeviceptr>(pinned)), CUDA_ERROR_INVALID_VALUE);
  ASSERT_CU(cuMemFree(managed));
  ASSERT_CU(cuMemFreeHost(pinned));
  ASSERT_CU(cuMemFreeHost(host));
  EXPECT_EQ(cuMemFreeHost(host), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(AccountingTest, FreeingUnknownPointersFails) {
  int local = 0;
  EXPECT_EQ(cuMemFree(reinterpret_cast<CUdeviceptr>(&local)), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAlloc(&p, 4096));
  EXPECT_EQ(cuMemFree(p + 512), CUDA_ERROR_INVALID_VALUE);
  ASSERT_CU(cuMemFree(p));
  EXPECT_EQ(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuMemFree(0));
}

TEST_F(AccountingTest, InvalidRequests) {
  CUdeviceptr p = 0;
  EXPECT_EQ(cuMemAlloc(&p, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemAlloc(nullptr, 512), CUDA_ERROR_INVALID_VALUE);
  cuCtxSetCurrent(nullptr);
  EXPECT_EQ(cuMemAlloc(&p, 512), CUDA_ERROR_INVALID_CONTEXT);
  size_t free = 0, total = 0;
  EXPECT_EQ(cuMemGetInfo(&free, &total), CUDA_ERROR_INVALID_CONTEXT);
}

TEST_F(AccountingTest, FreedBlockOfTheSameSizeIsReused) {
  CUdeviceptr a = 0, b = 0, c = 0, d = 0;
  ASSERT_CU(cuMemAlloc(&a, 1 * MiB));
  ASSERT_CU(cuMemAlloc(&b, 1 * MiB));
  ASSERT_CU(cuMemFree(a));
  ASSERT_CU(cuMemAlloc(&c, 1 * MiB - 100));  // rounds to the same size
  EXPECT_EQ(c, a);
  ASSERT_CU(cuMemFree(b));
  ASSERT_CU(cuMemFree(c));
  // Last freed, first reused.
  ASSERT_CU(cuMemAlloc(&d, 1 * MiB));
  EXPECT_EQ(d, c);
  ASSERT_CU(cuMemFree(d));
}

TEST_F(AccountingTest, MemoryIsUsable) {
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAlloc(&p, 1 * MiB));
  std::vector<unsigned char> in(1 * MiB), out(1 * MiB);
  for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<unsigned char>(i * 7);
  ASSERT_CU(cuMemcpyHtoD(p, in.data(), in.size()));
  ASSERT_CU(cuMemcpyDtoH(out.data(), p, out.size()));
  EXPECT_EQ(in, out);
  ASSERT_CU(cuMemFree(p));
}

TEST_F(AccountingTest, SixteenThreadsAllocateConcurrently) {
  const uint64_t before = free_bytes();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 16; t++) {
    threads.emplace_back([&, t] {
      if (cuCtxSetCurrent(ctx_) != CUDA_SUCCESS) failures++;
      std::vector<CUdeviceptr> live;
      for (int i = 0; i < 2000; i++) {
        CUdeviceptr p = 0;
        if (cuMemAlloc(&p, 512 * (1 + (i + t) % 37)) != CUDA_SUCCESS) failures++;
        live.push_back(p);
        if (i % 3 == 2) {
          if (cuMemFree(live.front()) != CUDA_SUCCESS) failures++;
          live.erase(live.begin());
        }
      }
      for (CUdeviceptr p : live)
        if (cuMemFree(p) != CUDA_SUCCESS) failures++;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(free_bytes(), before);
}

TEST_F(AccountingTest, ArraysCountAsDeviceMemory) {
  const uint64_t before = free_bytes();
  CUDA_ARRAY_DESCRIPTOR desc{.Width = 1000, .Height = 3, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 2};
  CUarray a = nullptr;
  ASSERT_CU(cuArrayCreate(&a, &desc));
  EXPECT_EQ(free_bytes(), before - 24064);  // 1000*3*8 = 24000, rounded up to 512
  CUDA_ARRAY3D_DESCRIPTOR desc3{
      .Width = 64, .Height = 64, .Depth = 64, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 4, .Flags = 0};
  CUarray b = nullptr;
  ASSERT_CU(cuArray3DCreate(&b, &desc3));
  EXPECT_EQ(free_bytes(), before - 24064 - 1 * MiB);
  CUDA_ARRAY3D_DESCRIPTOR back{};
  ASSERT_CU(cuArray3DGetDescriptor(&back, b));
  EXPECT_EQ(back.Depth, 64u);
  ASSERT_CU(cuArrayDestroy(a));
  EXPECT_EQ(free_bytes(), before - 1 * MiB);
  ASSERT_CU(cuArrayDestroy(b));
  EXPECT_EQ(free_bytes(), before);
  EXPECT_EQ(cuArrayDestroy(b), CUDA_ERROR_INVALID_HANDLE);
  desc.NumChannels = 3;
  EXPECT_EQ(cuArrayCreate(&a, &desc), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(AccountingTest, PrimaryContextResetFreesItsAllocations) {
  use_device(1);
  const uint64_t before = free_bytes();
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAlloc(&p, 8 * MiB));
  ASSERT_CU(cuMemAllocAsync(&p, 3 * MiB, nullptr));
  EXPECT_EQ(free_bytes(), before - 8 * MiB - 4 * MiB);
  ASSERT_CU(cuDevicePrimaryCtxReset(1));
  EXPECT_EQ(free_bytes(), before);
  ctx_ = nullptr;  // the reset dropped the reference
}

}  // namespace
}  // namespace gpumemtrace::sim::test
