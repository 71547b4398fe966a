#include "interpose/cupti/memory_callbacks.h"

#include <algorithm>
#include <iterator>

namespace gpumemtrace::interpose::cupti {

using format::Api;

namespace {

constexpr MemoryCallback kCallbacks[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, Api::cuMemAlloc},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, Api::cuMemAllocPitch},
    {CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, Api::cuMemFree},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, Api::cuMemAllocManaged},
    {CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, Api::cuMemHostAlloc},
    {CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc_v2, Api::cuMemHostAlloc},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, Api::cuMemAllocHost},
    {CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, Api::cuMemFreeHost},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, Api::cuMemAllocAsync},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, Api::cuMemAllocAsync},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync, Api::cuMemAllocFromPoolAsync},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz, Api::cuMemAllocFromPoolAsync},
    {CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, Api::cuMemFreeAsync},
    {CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz, Api::cuMemFreeAsync},
    {CUPTI_DRIVER_TRACE_CBID_cuArrayCreate_v2, Api::cuArrayCreate},
    {CUPTI_DRIVER_TRACE_CBID_cuArray3DCreate_v2, Api::cuArray3DCreate},
    {CUPTI_DRIVER_TRACE_CBID_cuArrayDestroy, Api::cuArrayDestroy},
    {CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate, std::nullopt},
    {CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo, std::nullopt},
    {CUPTI_DRIVER_TRACE_CBID_cuMemPoolDestroy, std::nullopt},
};

}  // namespace

std::span<const MemoryCallback> memory_callbacks() { return kCallbacks; }

const MemoryCallback* find_memory_callback(uint32_t cbid) {
  auto it = std::ranges::find_if(kCallbacks, [&](const MemoryCallback& c) { return c.id == cbid; });
  return it == std::end(kCallbacks) ? nullptr : it;
}

}  // namespace gpumemtrace::interpose::cupti
