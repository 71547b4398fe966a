// The NVTX memory extension (nvtx3/nvToolsExtMem.h): a program's pool allocator registers its heaps and the
// regions (blocks) it hands out from them. NVTX3 initializes an extension module at its first call: after the
// core (InitializeInjectionNvtx2), it looks up InitializeInjectionNvtxExtension in the same injection library
// and passes the module's function slots, which the tool fills for the calls it handles; NVTX disables the
// others. The calls become the heap and sub-allocation records of annotate.h (docs/capture.md, "Heaps").
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "interpose/heaps/heap_recorder.h"
#include "interpose/nvtx/nvtx_message.h"

namespace gpumemtrace::interpose::nvtx {

namespace {

// The heap of each registered region, by address: an unregister names a region by its address or by its
// handle, which is its address. Regions of no heap (NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE) are in heap 0.
class Regions {
 public:
  void add(uint64_t address, uint64_t heap) {
    std::lock_guard lock(mutex_);
    heaps_[address] = heap;
  }
  // The heap the region at `address` was in (0 when unknown), forgotten.
  uint64_t take(uint64_t address) {
    std::lock_guard lock(mutex_);
    auto it = heaps_.find(address);
    if (it == heaps_.end()) return 0;
    uint64_t heap = it->second;
    heaps_.erase(it);
    return heap;
  }
  uint64_t heap_of(uint64_t address) {
    std::lock_guard lock(mutex_);
    auto it = heaps_.find(address);
    return it == heaps_.end() ? 0 : it->second;
  }
  void forget_heap(uint64_t heap) {
    std::lock_guard lock(mutex_);
    std::erase_if(heaps_, [heap](const auto& entry) { return entry.second == heap; });
  }

 private:
  std::mutex mutex_;
  std::unordered_map<uint64_t, uint64_t> heaps_;
};

Regions& regions() {
  static Regions* instance = new Regions();  // never destroyed: allocators may free during exit
  return *instance;
}

uint64_t heap_id(nvtxMemHeapHandle_t heap) { return reinterpret_cast<uintptr_t>(heap); }
uint64_t address_of(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

// Whether a struct of `size` bytes (its structSize) has the member ending at `end`.
constexpr bool has(size_t size, size_t end) { return size >= end; }

// The i-th element of an array whose elements are `stride` bytes apart (0: sizeof(T)).
template <typename T>
const T& element(const void* elements, size_t stride, size_t i) {
  return *reinterpret_cast<const T*>(static_cast<const char*>(elements) + i * (stride ? stride : sizeof(T)));
}

nvtxMemHeapHandle_t NVTX_API heap_register(nvtxDomainHandle_t, const nvtxMemHeapDesc_t* desc) {
  uint64_t address = 0, size = 0;
  std::string name;
  if (desc) {
    if (has(desc->structSize, offsetof(nvtxMemHeapDesc_t, typeSpecificDesc) + sizeof(desc->typeSpecificDesc)) &&
        desc->type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS && desc->typeSpecificDesc &&
        desc->typeSpecificDescSize >= sizeof(nvtxMemVirtualRangeDesc_t)) {
      const auto* range = static_cast<const nvtxMemVirtualRangeDesc_t*>(desc->typeSpecificDesc);
      address = address_of(range->ptr);
      size = range->size;
    }
    if (has(desc->structSize, offsetof(nvtxMemHeapDesc_t, message) + sizeof(desc->message)))
      name = message_text(static_cast<int32_t>(desc->messageType), desc->message);
  }
  // NVTX does not say the device: the analyzer takes that of the allocation holding the heap's memory.
  return reinterpret_cast<nvtxMemHeapHandle_t>(heaps::create(name, -1, address, size));
}

void NVTX_API heap_unregister(nvtxDomainHandle_t, nvtxMemHeapHandle_t heap) {
  heaps::destroy(heap_id(heap));
  regions().forget_heap(heap_id(heap));
}

void NVTX_API heap_reset(nvtxDomainHandle_t, nvtxMemHeapHandle_t heap) {
  heaps::reset(heap_id(heap));
  regions().forget_heap(heap_id(heap));
}

void NVTX_API regions_register(nvtxDomainHandle_t, const nvtxMemRegionsRegisterBatch_t* batch) {
  if (!batch || batch->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || !batch->regionDescElements) return;
  uint64_t heap = heap_id(batch->heap);
  for (size_t i = 0; i < batch->regionCount; ++i) {
    const auto& range =
        element<nvtxMemVirtualRangeDesc_t>(batch->regionDescElements, batch->regionDescElementSize, i);
    regions().add(address_of(range.ptr), heap);
    heaps::suballoc(heap, address_of(range.ptr), range.size, 0);
    if (batch->regionHandleElementsOut)
      batch->regionHandleElementsOut[i] = reinterpret_cast<nvtxMemRegionHandle_t>(const_cast<void*>(range.ptr));
  }
}

// A resized region is freed and allocated again at its new size, with the stack of the resize.
void NVTX_API regions_resize(nvtxDomainHandle_t, const nvtxMemRegionsResizeBatch_t* batch) {
  if (!batch || batch->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || !batch->regionDescElements) return;
  for (size_t i = 0; i < batch->regionDescCount; ++i) {
    const auto& range =
        element<nvtxMemVirtualRangeDesc_t>(batch->regionDescElements, batch->regionDescElementSize, i);
    uint64_t heap = regions().heap_of(address_of(range.ptr));
    heaps::subfree(heap, address_of(range.ptr));
    heaps::suballoc(heap, address_of(range.ptr), range.size, 0);
  }
}

void NVTX_API regions_unregister(nvtxDomainHandle_t, const nvtxMemRegionsUnregisterBatch_t* batch) {
  if (!batch || !batch->refElements) return;
  if (batch->refType != NVTX_MEM_REGION_REF_TYPE_POINTER && batch->refType != NVTX_MEM_REGION_REF_TYPE_HANDLE) return;
  for (size_t i = 0; i < batch->refCount; ++i) {
    // A handle is the region's address, so both kinds of reference read the same.
    uint64_t address = address_of(element<nvtxMemRegionRef_t>(batch->refElements, batch->refElementSize, i).pointer);
    heaps::subfree(regions().take(address), address);
  }
}

void NVTX_API regions_name(nvtxDomainHandle_t, const nvtxMemRegionsNameBatch_t* batch) {
  if (!batch || !batch->regionElements) return;
  for (size_t i = 0; i < batch->regionCount; ++i) {
    const auto& desc = element<nvtxMemRegionNameDesc_t>(batch->regionElements, batch->regionElementSize, i);
    if (desc.regionRefType != NVTX_MEM_REGION_REF_TYPE_POINTER && desc.regionRefType != NVTX_MEM_REGION_REF_TYPE_HANDLE)
      continue;
    uint64_t address = address_of(desc.region.pointer);  // a handle is the region's address
    heaps::name(regions().heap_of(address), address, message_text(static_cast<int32_t>(desc.nameType), desc.name));
  }
}

}  // namespace

}  // namespace gpumemtrace::interpose::nvtx

using namespace gpumemtrace::interpose::nvtx;

// Called once per NVTX extension module the program uses; handles the memory extension's core calls (heaps
// and regions, their names) and declines the other modules (0: NVTX makes their calls no-ops).
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t* module) {
  if (!module || module->moduleId != NVTX_EXT_MODULEID_MEM || module->compatId != NVTX_EXT_COMPATID_MEM ||
      module->segmentsCount < 1 || !module->segments)
    return 0;
  nvtxExtModuleSegment_t& segment = module->segments[0];
  if (!segment.functionSlots) return 0;
  regions();  // made now, not by the first region call: see cupti::prepare()
  auto fill = [&segment](size_t id, auto function) {
    if (id < segment.slotCount) segment.functionSlots[id] = reinterpret_cast<intptr_t>(function);
  };
  fill(NVTX3EXT_CBID_nvtxMemHeapRegister, heap_register);
  fill(NVTX3EXT_CBID_nvtxMemHeapUnregister, heap_unregister);
  fill(NVTX3EXT_CBID_nvtxMemHeapReset, heap_reset);
  fill(NVTX3EXT_CBID_nvtxMemRegionsRegister, regions_register);
  fill(NVTX3EXT_CBID_nvtxMemRegionsResize, regions_resize);
  fill(NVTX3EXT_CBID_nvtxMemRegionsUnregister, regions_unregister);
  fill(NVTX3EXT_CBID_nvtxMemRegionsName, regions_name);
  return 1;
}
