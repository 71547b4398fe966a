// The NVTX memory extension with NVIDIA's own header-only NVTX3: a pool allocator's heap in one cudaMalloc
// segment, regions registered (in a batch, with handles back), named (by pointer, by handle), resized, unregistered by handle and by
// pointer, a region of no heap, then the heap reset and unregistered. Heaps.FromNvtxMemoryExtension (heaps_test.cpp) has
// the records it must give. With the argument "oom" (on a 4 MiB simulated device), it asks the device for
// 3 MiB while the heap holds one block [0, 1024): more than is free, less than that plus the heap's free
// gap, more than the gap. Prints what it did, which must be the same with and without the tracer. Once the
// heap holds [0, 512) and [4096, 4608) it pauses 2 ms: the moment the tests ask the analyzer's figures at
// (fragmentation --at), which no later record shares (the trace's clock counts microseconds).
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "tests/support/program_check.h"

namespace {

nvtxDomainHandle_t g_domain;

nvtxMemVirtualRangeDesc_t range(char* base, size_t offset, size_t size) { return {size, base + offset}; }

void register_regions(nvtxMemHeapHandle_t heap, const nvtxMemVirtualRangeDesc_t* ranges, size_t count,
                      nvtxMemRegionHandle_t* handles) {
  nvtxMemRegionsRegisterBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.heap = heap;
  batch.regionCount = count;
  batch.regionDescElementSize = sizeof(nvtxMemVirtualRangeDesc_t);
  batch.regionDescElements = ranges;
  batch.regionHandleElementsOut = handles;
  nvtxMemRegionsRegister(g_domain, &batch);
}

void unregister_region(uint32_t ref_type, nvtxMemRegionRef_t ref) {
  nvtxMemRegionsUnregisterBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.refType = ref_type;
  batch.refCount = 1;
  batch.refElementSize = sizeof(nvtxMemRegionRef_t);
  batch.refElements = &ref;
  nvtxMemRegionsUnregister(g_domain, &batch);
}

void name_region(uint32_t ref_type, nvtxMemRegionRef_t ref, uint32_t name_type, nvtxMessageValue_t name) {
  nvtxMemRegionNameDesc_t desc{};
  desc.regionRefType = ref_type;
  desc.nameType = name_type;
  desc.region = ref;
  desc.name = name;
  nvtxMemRegionsNameBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.regionCount = 1;
  batch.regionElementSize = sizeof(desc);
  batch.regionElements = &desc;
  nvtxMemRegionsName(g_domain, &batch);
}

}  // namespace

int main(int argc, char** argv) {
  constexpr size_t kSegment = 2 << 20;
  char* segment = nullptr;
  CHECK_OK(cudaMalloc(reinterpret_cast<void**>(&segment), kSegment));
  g_domain = nvtxDomainCreateA("pool");

  nvtxMemVirtualRangeDesc_t whole = range(segment, 0, kSegment);
  nvtxMemHeapDesc_t desc{};
  desc.extCompatID = NVTX_EXT_COMPATID_MEM;
  desc.structSize = sizeof(desc);
  desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  desc.typeSpecificDescSize = sizeof(whole);
  desc.typeSpecificDesc = &whole;
  desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
  desc.message.ascii = "small blocks";
  nvtxMemHeapHandle_t heap = nvtxMemHeapRegister(g_domain, &desc);

  nvtxMemVirtualRangeDesc_t blocks[] = {range(segment, 0, 1024), range(segment, 1024, 3072)};
  nvtxMemRegionHandle_t handles[2] = {};
  register_regions(heap, blocks, 2, handles);
  nvtxMemRegionRef_t first_block{};
  first_block.pointer = segment;
  nvtxMessageValue_t weights{};
  weights.ascii = "weights";
  name_region(NVTX_MEM_REGION_REF_TYPE_POINTER, first_block, NVTX_MESSAGE_TYPE_ASCII, weights);
  nvtxMemRegionRef_t second_block{};
  second_block.handle = handles[1];
  nvtxMessageValue_t activations{};
  activations.registered = nvtxDomainRegisterStringA(g_domain, "activations");
  name_region(NVTX_MEM_REGION_REF_TYPE_HANDLE, second_block, NVTX_MESSAGE_TYPE_REGISTERED, activations);
  nvtxMemRegionRef_t second{};
  second.handle = handles[1];
  unregister_region(NVTX_MEM_REGION_REF_TYPE_HANDLE, second);
  if (argc > 1 && std::strcmp(argv[1], "oom") == 0) {
    void* large = nullptr;
    std::printf("large %d\n", static_cast<int>(cudaMalloc(&large, 3 << 20)));
  }

  nvtxMemVirtualRangeDesc_t smaller = range(segment, 0, 512);
  nvtxMemRegionsResizeBatch_t resize{};
  resize.extCompatID = NVTX_EXT_COMPATID_MEM;
  resize.structSize = sizeof(resize);
  resize.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  resize.regionDescCount = 1;
  resize.regionDescElementSize = sizeof(smaller);
  resize.regionDescElements = &smaller;
  nvtxMemRegionsResize(g_domain, &resize);

  nvtxMemVirtualRangeDesc_t third = range(segment, 4096, 512);
  register_regions(heap, &third, 1, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  nvtxMemRegionRef_t first{};
  first.pointer = segment;
  unregister_region(NVTX_MEM_REGION_REF_TYPE_POINTER, first);
  nvtxMemHeapReset(g_domain, heap);

  nvtxMemVirtualRangeDesc_t loose = range(segment, 8192, 256);
  register_regions(NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE, &loose, 1, nullptr);
  nvtxMemRegionRef_t loose_ref{};
  loose_ref.pointer = segment + 8192;
  unregister_region(NVTX_MEM_REGION_REF_TYPE_POINTER, loose_ref);
  nvtxMemHeapUnregister(g_domain, heap);

  CHECK_OK(cudaFree(segment));
  std::printf("done\n");
  return 0;
}
