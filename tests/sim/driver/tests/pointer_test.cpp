// Pointer attributes, address ranges, copies and fills.
#include <cstring>
#include <vector>

#include "sim_test.h"

namespace gpumemtrace::sim::test {
namespace {

using PointerTest = SimTest;

TEST_F(PointerTest, DeviceAllocationAttributes) {
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAlloc(&p, 1000));
  unsigned int type = 0, managed = 1;
  CUcontext ctx = nullptr;
  int ordinal = -1;
  CUdeviceptr start = 0;
  size_t size = 0;
  unsigned long long id = 0;
  ASSERT_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 10));
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_DEVICE});
  ASSERT_CU(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p));
  EXPECT_EQ(ctx, ctx_);
  ASSERT_CU(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
  EXPECT_EQ(ordinal, 0);
  ASSERT_CU(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
  EXPECT_EQ(managed, 0u);
  ASSERT_CU(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 999));
  EXPECT_EQ(start, p);
  ASSERT_CU(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 999));
  EXPECT_EQ(size, 1000u);
  ASSERT_CU(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p));
  EXPECT_NE(id, 0u);
  void* host = nullptr;
  EXPECT_EQ(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 1000), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr base = 0;
  ASSERT_CU(cuMemGetAddressRange(&base, &size, p + 5));
  EXPECT_EQ(base, p);
  EXPECT_EQ(size, 1000u);
  ASSERT_CU(cuMemFree(p));
  EXPECT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemGetAddressRange(&base, &size, p), CUDA_ERROR_NOT_FOUND);
}

TEST_F(PointerTest, ManagedHostAndUnknownPointers) {
  CUdeviceptr managed = 0;
  void* pinned = nullptr;
  ASSERT_CU(cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL));
  ASSERT_CU(cuMemHostAlloc(&pinned, 4096, 0));
  unsigned int is_managed = 0, type = 0;
  ASSERT_CU(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed));
  EXPECT_EQ(is_managed, 1u);
  ASSERT_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(pinned)));
  EXPECT_EQ(type, unsigned{CU_MEMORYTYPE_HOST});
  // cuPointerGetAttributes: every attribute at once; a pointer that is not CUDA memory is no error.
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_HOST_POINTER, CU_POINTER_ATTRIBUTE_IS_MANAGED};
  int ordinal = 7;
  void* host = nullptr;
  void* data[] = {&type, &ordinal, &host, &is_managed};
  ASSERT_CU(cuPointerGetAttributes(4, attrs, data, managed));
  EXPECT_EQ(ordinal, 0);
  EXPECT_EQ(host, reinterpret_cast<void*>(managed));
  int local = 0;
  ASSERT_CU(cuPointerGetAttributes(4, attrs, data, reinterpret_cast<CUdeviceptr>(&local)));
  EXPECT_EQ(type, 0u);
  EXPECT_EQ(ordinal, -1);
  EXPECT_EQ(host, nullptr);
  EXPECT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(&local)),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_CU(cuMemFree(managed));
  ASSERT_CU(cuMemFreeHost(pinned));
}

TEST_F(PointerTest, CopiesAndFillsStayInsideAllocations) {
  CUdeviceptr a = 0, b = 0;
  ASSERT_CU(cuMemAlloc(&a, 4096));
  ASSERT_CU(cuMemAlloc(&b, 4096));
  ASSERT_CU(cuMemsetD16(a, 0xbeef, 2048));
  ASSERT_CU(cuMemcpyDtoD(b, a, 4096));
  std::vector<uint16_t> out(2048);
  ASSERT_CU(cuMemcpyDtoH(out.data(), b, 4096));
  EXPECT_EQ(out.front(), 0xbeef);
  EXPECT_EQ(out.back(), 0xbeef);
  EXPECT_EQ(cuMemsetD8(a + 4000, 1, 200), CUDA_ERROR_INVALID_VALUE);   // runs past the allocation
  EXPECT_EQ(cuMemsetD32(a + 2, 1, 4), CUDA_ERROR_INVALID_VALUE);       // misaligned
  EXPECT_EQ(cuMemcpyHtoD(a + 4000, out.data(), 200), CUDA_ERROR_INVALID_VALUE);  // spans two allocations
  // cuMemcpy takes plain host memory on either side (unified addressing).
  uint16_t host[4] = {1, 2, 3, 4};
  ASSERT_CU(cuMemcpy(a, reinterpret_cast<CUdeviceptr>(host), sizeof host));
  ASSERT_CU(cuMemcpyDtoH(out.data(), a, 8));
  EXPECT_EQ(out[3], 4);
  // 2D: two rows of 3 bytes from a pitched allocation.
  CUdeviceptr pitched = 0;
  size_t pitch = 0;
  ASSERT_CU(cuMemAllocPitch(&pitched, &pitch, 3, 2, 4));
  ASSERT_CU(cuMemsetD2D8(pitched, pitch, 0x11, 3, 2));
  unsigned char rows[6] = {};
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = pitched;
  copy.srcPitch = pitch;
  copy.dstMemoryType = CU_MEMORYTYPE_HOST;
  copy.dstHost = rows;
  copy.dstPitch = 3;
  copy.WidthInBytes = 3;
  copy.Height = 2;
  ASSERT_CU(cuMemcpy2D(&copy));
  EXPECT_EQ(rows[5], 0x11);
  for (CUdeviceptr p : {a, b, pitched}) ASSERT_CU(cuMemFree(p));
}

TEST_F(PointerTest, ArrayCopies) {
  CUDA_ARRAY_DESCRIPTOR desc{.Width = 16, .Height = 4, .Format = CU_AD_FORMAT_UNSIGNED_INT32, .NumChannels = 1};
  CUarray array = nullptr;
  ASSERT_CU(cuArrayCreate(&array, &desc));
  uint32_t in[64], out[64] = {};
  for (uint32_t i = 0; i < 64; i++) in[i] = i * 3;
  ASSERT_CU(cuMemcpyHtoA(array, 0, in, sizeof in));
  ASSERT_CU(cuMemcpyAtoH(out, array, 0, sizeof out));
  EXPECT_EQ(std::memcmp(in, out, sizeof in), 0);
  EXPECT_EQ(cuMemcpyHtoA(array, 8, in, sizeof in), CUDA_ERROR_INVALID_VALUE);  // past the end
  // Row 2 of the array through a 2D copy.
  uint32_t row[16] = {};
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  copy.srcArray = array;
  copy.srcY = 2;
  copy.dstMemoryType = CU_MEMORYTYPE_HOST;
  copy.dstHost = row;
  copy.dstPitch = sizeof row;
  copy.WidthInBytes = sizeof row;
  copy.Height = 1;
  ASSERT_CU(cuMemcpy2D(&copy));
  EXPECT_EQ(row[0], 32u * 3);
  ASSERT_CU(cuArrayDestroy(array));
}

}  // namespace
}  // namespace gpumemtrace::sim::test
