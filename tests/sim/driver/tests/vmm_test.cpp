// Virtual memory management: granularity, physical memory accounting, reservations, mappings that alias, unmap
// and release in either order.
#include <unistd.h>

#include <cstring>

#include "sim_test.h"

namespace gpumemtrace::sim::test {
namespace {

class VmmTest : public SimTest {
 protected:
  static CUmemAllocationProp prop(int device = 0) {
    CUmemAllocationProp p{};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location = {CU_MEM_LOCATION_TYPE_DEVICE, device};
    p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return p;
  }
  static CUmemAccessDesc rw(int device = 0) {
    CUmemAccessDesc d{};
    d.location = {CU_MEM_LOCATION_TYPE_DEVICE, device};
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return d;
  }
};

TEST_F(VmmTest, GranularityIs2MiB) {
  CUmemAllocationProp p = prop();
  size_t g = 0;
  ASSERT_CU(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  EXPECT_EQ(g, 2 * MiB);
  ASSERT_CU(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  EXPECT_EQ(g, 2 * MiB);
  p.location.id = 7;
  EXPECT_EQ(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_DEVICE);
}

TEST_F(VmmTest, CreateNeedsAMultipleOfTheGranularity) {
  const uint64_t before = free_bytes();
  CUmemAllocationProp p = prop();
  CUmemGenericAllocationHandle h = 0;
  EXPECT_EQ(cuMemCreate(&h, 1 * MiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemCreate(&h, 3 * MiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemCreate(&h, 0, &p, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemCreate(&h, (before / (2 * MiB) + 1) * 2 * MiB, &p, 0), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(free_bytes(), before);
}

TEST_F(VmmTest, PhysicalMemoryCountsFromCreateUntilReleasedAndUnmapped) {
  const uint64_t before = free_bytes();
  CUmemAllocationProp p = prop();
  CUmemGenericAllocationHandle h = 0;
  ASSERT_CU(cuMemCreate(&h, 4 * MiB, &p, 0));
  EXPECT_EQ(free_bytes(), before - 4 * MiB);
  CUmemAllocationProp back{};
  ASSERT_CU(cuMemGetAllocationPropertiesFromHandle(&back, h));
  EXPECT_EQ(back.location.id, 0);

  // An address reservation is not memory.
  CUdeviceptr va = 0;
  ASSERT_CU(cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0));
  EXPECT_EQ(va % (2 * MiB), 0u);
  EXPECT_EQ(free_bytes(), before - 4 * MiB);

  // The same handle mapped twice: both mappings see the same bytes.
  ASSERT_CU(cuMemMap(va, 4 * MiB, 0, h, 0));
  ASSERT_CU(cuMemMap(va + 4 * MiB, 4 * MiB, 0, h, 0));
  EXPECT_EQ(cuMemMap(va, 2 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);  // already mapped
  CUmemAccessDesc access = rw();
  ASSERT_CU(cuMemSetAccess(va, 8 * MiB, &access, 1));
  unsigned long long flags = 0;
  ASSERT_CU(cuMemGetAccess(&flags, &access.location, va + 5 * MiB));
  EXPECT_EQ(flags, unsigned{CU_MEM_ACCESS_FLAGS_PROT_READWRITE});
  const char text[] = "through the mapping";
  ASSERT_CU(cuMemcpyHtoD(va + 100, text, sizeof text));
  char out[sizeof text] = {};
  ASSERT_CU(cuMemcpyDtoH(out, va + 4 * MiB + 100, sizeof text));
  EXPECT_STREQ(out, text);
  // The two mappings follow one another: a copy may cross from one to the other (PyTorch's expandable segments
  // copy across their pages), not past the last.
  ASSERT_CU(cuMemcpyHtoD(va + 4 * MiB - 4, text, sizeof text));
  ASSERT_CU(cuMemcpyDtoH(out, va + 4 * MiB - 4, sizeof text));
  EXPECT_STREQ(out, text);
  EXPECT_EQ(cuMemcpyDtoH(out, va + 8 * MiB - 4, sizeof text), CUDA_ERROR_INVALID_VALUE);
  ASSERT_CU(cuMemsetD32(va + 1 * MiB, 0x01020304, 1024));
  EXPECT_EQ(*reinterpret_cast<uint32_t*>(va + 5 * MiB), 0x01020304u);

  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_CU(cuMemGetAddressRange(&base, &size, va + 4 * MiB + 7));
  EXPECT_EQ(base, va + 4 * MiB);
  EXPECT_EQ(size, 4 * MiB);

  // Released while mapped: still counted until the last mapping goes.
  ASSERT_CU(cuMemRelease(h));
  EXPECT_EQ(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(free_bytes(), before - 4 * MiB);
  EXPECT_EQ(cuMemUnmap(va, 2 * MiB), CUDA_ERROR_INVALID_VALUE);  // part of a mapping
  ASSERT_CU(cuMemUnmap(va, 4 * MiB));
  EXPECT_EQ(free_bytes(), before - 4 * MiB);
  ASSERT_CU(cuMemUnmap(va + 4 * MiB, 4 * MiB));
  EXPECT_EQ(free_bytes(), before);
  EXPECT_EQ(cuMemAddressFree(va, 4 * MiB), CUDA_ERROR_INVALID_VALUE);  // not the reserved size
  ASSERT_CU(cuMemAddressFree(va, 8 * MiB));
}

// PyTorch's expandable segments export each handle and import it back: the same memory, one more reference.
TEST_F(VmmTest, ExportedHandleImportsBackInTheSameProcess) {
  const uint64_t before = free_bytes();
  CUmemAllocationProp p = prop();
  CUmemGenericAllocationHandle h = 0;
  ASSERT_CU(cuMemCreate(&h, 2 * MiB, &p, 0));
  int fd = -1;
  ASSERT_CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUmemGenericAllocationHandle imported = 0;
  ASSERT_CU(cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  EXPECT_EQ(imported, h);
  EXPECT_EQ(free_bytes(), before - 2 * MiB);
  ASSERT_CU(cuMemRelease(h));
  EXPECT_EQ(free_bytes(), before - 2 * MiB) << "the import's reference holds it";
  ASSERT_CU(cuMemRelease(imported));
  EXPECT_EQ(free_bytes(), before);
  EXPECT_EQ(cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            CUDA_ERROR_NOT_SUPPORTED)
      << "a descriptor of no live handle (another process's)";
  close(fd);
}

// cuStreamWriteValue32 writes in stream order, through a mapping like any device memory.
TEST_F(VmmTest, StreamWriteValue32WritesTheValue) {
  CUdeviceptr d = 0;
  ASSERT_CU(cuMemAlloc(&d, 4096));
  ASSERT_CU(cuMemsetD32(d, 0, 1024));
  ASSERT_CU(cuStreamWriteValue32(nullptr, d + 8, 0xfeedbeefu, CU_STREAM_WRITE_VALUE_DEFAULT));
  ASSERT_CU(cuStreamSynchronize(nullptr));
  uint32_t words[3] = {};
  ASSERT_CU(cuMemcpyDtoH(words, d, sizeof words));
  EXPECT_EQ(words[0], 0u);
  EXPECT_EQ(words[2], 0xfeedbeefu);
  ASSERT_CU(cuMemFree(d));
}

TEST_F(VmmTest, UnmapThenReleaseAndMultiMappingUnmap) {
  const uint64_t before = free_bytes();
  CUmemAllocationProp p = prop();
  CUmemGenericAllocationHandle a = 0, b = 0;
  ASSERT_CU(cuMemCreate(&a, 2 * MiB, &p, 0));
  ASSERT_CU(cuMemCreate(&b, 2 * MiB, &p, 0));
  CUdeviceptr va = 0;
  ASSERT_CU(cuMemAddressReserve(&va, 4 * MiB, 0, 0, 0));
  ASSERT_CU(cuMemMap(va, 2 * MiB, 0, a, 0));
  ASSERT_CU(cuMemMap(va + 2 * MiB, 2 * MiB, 0, b, 0));
  CUmemGenericAllocationHandle retained = 0;
  ASSERT_CU(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va + 3 * MiB)));
  EXPECT_EQ(retained, b);
  ASSERT_CU(cuMemUnmap(va, 4 * MiB));  // one call for two adjacent mappings
  EXPECT_EQ(free_bytes(), before - 4 * MiB);
  ASSERT_CU(cuMemRelease(a));
  EXPECT_EQ(free_bytes(), before - 2 * MiB);
  ASSERT_CU(cuMemRelease(b));
  EXPECT_EQ(free_bytes(), before - 2 * MiB);  // retained once more
  ASSERT_CU(cuMemRelease(b));
  EXPECT_EQ(free_bytes(), before);
  ASSERT_CU(cuMemAddressFree(va, 4 * MiB));
}

TEST_F(VmmTest, MappingsNeedAReservationAndAlignment) {
  CUmemAllocationProp p = prop(1);
  CUmemGenericAllocationHandle h = 0;
  ASSERT_CU(cuMemCreate(&h, 2 * MiB, &p, 0));
  CUdeviceptr va = 0;
  ASSERT_CU(cuMemAddressReserve(&va, 4 * MiB, 0, 0, 0));
  EXPECT_EQ(cuMemMap(va + 4096, 2 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemMap(va, 4 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);  // larger than the handle
  EXPECT_EQ(cuMemMap(va + 4 * MiB, 2 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);  // outside the reservation
  EXPECT_EQ(cuMemAddressReserve(&va, 3 * MiB, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  int device = -1;
  ASSERT_CU(cuMemMap(va + 2 * MiB, 2 * MiB, 0, h, 0));
  ASSERT_CU(cuPointerGetAttribute(&device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va + 2 * MiB));
  EXPECT_EQ(device, 1);
  ASSERT_CU(cuMemRelease(h));
  ASSERT_CU(cuMemAddressFree(va, 4 * MiB));  // drops the mapping left inside, which frees the memory
  use_device(1);
  EXPECT_EQ(free_bytes(), kCapacity - kOthers[1]);
}

}  // namespace
}  // namespace gpumemtrace::sim::test
