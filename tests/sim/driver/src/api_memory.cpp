// Memory entry points: cuMemAlloc and friends, managed and host memory, stream-ordered allocation and pools,
// arrays, address ranges and pointer attributes.
#include <algorithm>
#include <cstring>

#include "state.h"

using namespace gpumemtrace::sim;

namespace {

CUresult mem_alloc(CUdeviceptr* dptr, size_t bytesize) {
  SIM_REQUIRE_CTX(ctx);
  if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  Device& dev = *ctx->dev;
  uintptr_t addr;
  CUresult r;
  {
    std::lock_guard lock(dev.mu);
    r = arena_alloc(dev, bytesize, BlockKind::Plain, nullptr, ctx, &addr);
  }
  if (r == CUDA_SUCCESS) *dptr = addr;
  return r;
}

// The legacy (CUDA 2.x, 32-bit) entry points can only hand out addresses below 4 GiB, which the simulated device
// never has: they report CUDA_ERROR_NOT_SUPPORTED. Those that take a pointer forward to the 64-bit versions.
constexpr CUresult kLegacyPointers = CUDA_ERROR_NOT_SUPPORTED;

CUresult pool_alloc_async(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  SIM_REQUIRE_INIT();
  if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  CUresult err = CUDA_SUCCESS;
  CUctx_st* ctx = stream_ctx(hStream, &err);
  if (!ctx) return err;
  Device& dev = *ctx->dev;
  std::lock_guard lock(dev.mu);
  if (!pool) {
    pool = dev.current_pool;
  } else if (!valid(pool) || pool->destroyed) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  uintptr_t addr;
  CUresult r = pool_alloc(*pool, bytesize, ctx, &addr);
  if (r == CUDA_SUCCESS) *dptr = addr;
  return r;
}

CUresult free_async(CUdeviceptr dptr, CUstream hStream) {
  CUresult r = check_stream(hStream);
  return r == CUDA_SUCCESS ? free_device_pointer(dptr) : r;
}

CUmemPoolHandle_st* device_pool(const CUmemLocation* location, CUmemAllocationType type, CUresult* err,
                                Device** out_dev) {
  if (!location || type != CU_MEM_ALLOCATION_TYPE_PINNED) {
    *err = CUDA_ERROR_INVALID_VALUE;
    return nullptr;
  }
  if (location->type != CU_MEM_LOCATION_TYPE_DEVICE) {
    *err = CUDA_ERROR_NOT_SUPPORTED;  // host and managed pools are not simulated
    return nullptr;
  }
  Device* dev = device(location->id);
  if (!dev) {
    *err = CUDA_ERROR_INVALID_DEVICE;
    return nullptr;
  }
  *out_dev = dev;
  return dev->default_pool;
}

// A device's default pool, or its current pool (the one cuMemAllocAsync uses).
CUresult get_device_pool(CUmemoryPool* out, CUdevice ordinal, bool current) {
  SIM_REQUIRE_INIT();
  Device* dev = device(ordinal);
  if (!dev) return CUDA_ERROR_INVALID_DEVICE;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(dev->mu);
  *out = current ? dev->current_pool : dev->default_pool;
  return CUDA_SUCCESS;
}

size_t format_size(CUarray_format format) {
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1:
      return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1:
      return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
      return 4;
    default:
      return 0;
  }
}

CUresult array_create(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR& desc) {
  SIM_REQUIRE_CTX(ctx);
  size_t element = format_size(desc.Format);
  if (!pHandle || desc.Width == 0 || element == 0 ||
      (desc.NumChannels != 1 && desc.NumChannels != 2 && desc.NumChannels != 4) ||
      (desc.Depth != 0 && desc.Height == 0))
    return CUDA_ERROR_INVALID_VALUE;
  element *= desc.NumChannels;
  uint64_t bytes = desc.Width * std::max<size_t>(desc.Height, 1) * std::max<size_t>(desc.Depth, 1) * element;
  Device& dev = *ctx->dev;
  auto* array = new_handle<CUarray_st>();
  array->dev = &dev;
  array->desc = desc;
  array->bytes = bytes;
  array->element_size = element;
  uintptr_t addr;
  CUresult r;
  {
    std::lock_guard lock(dev.mu);
    r = arena_alloc(dev, bytes, BlockKind::Array, array, ctx, &addr);
  }
  if (r != CUDA_SUCCESS) {
    array->magic.store(0, std::memory_order_relaxed);  // never handed out; its memory stays with the others
    return r;
  }
  array->base = addr;
  *pHandle = array;
  return CUDA_SUCCESS;
}

}  // namespace

// ---- cuMemAlloc family ----------------------------------------------------------------------------------------

CUAPI cuMemGetInfo_v2(size_t* free, size_t* total) {
  SIM_REQUIRE_CTX(ctx);
  if (!free || !total) return CUDA_ERROR_INVALID_VALUE;
  Device& dev = *ctx->dev;
  std::lock_guard lock(dev.mu);
  *free = dev.free_bytes();
  *total = dev.capacity;
  return CUDA_SUCCESS;
}
CUAPI cuMemGetInfo(unsigned int* free, unsigned int* total) {
  size_t f, t;
  CUresult r = cuMemGetInfo_v2(free ? &f : nullptr, total ? &t : nullptr);
  if (r == CUDA_SUCCESS) {
    *free = static_cast<unsigned int>(std::min<size_t>(f, 0xffffffffu));
    *total = static_cast<unsigned int>(std::min<size_t>(t, 0xffffffffu));
  }
  return r;
}

CUAPI cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) { return mem_alloc(dptr, bytesize); }
CUAPI cuMemAlloc(CUdeviceptr_v1*, unsigned int) { return kLegacyPointers; }

CUAPI cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                         unsigned int ElementSizeBytes) {
  SIM_REQUIRE_CTX(ctx);
  if (!dptr || !pPitch || WidthInBytes == 0 || Height == 0 ||
      (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
    return CUDA_ERROR_INVALID_VALUE;
  size_t pitch = round_up(WidthInBytes, kAllocAlign);
  CUresult r = mem_alloc(dptr, pitch * Height);
  if (r == CUDA_SUCCESS) *pPitch = pitch;
  return r;
}
CUAPI cuMemAllocPitch(CUdeviceptr_v1*, unsigned int*, unsigned int, unsigned int, unsigned int) {
  return kLegacyPointers;
}

CUAPI cuMemFree_v2(CUdeviceptr dptr) {
  SIM_REQUIRE_INIT();
  if (dptr == 0) return CUDA_SUCCESS;
  return free_device_pointer(dptr);
}
CUAPI cuMemFree(CUdeviceptr_v1 dptr) { return cuMemFree_v2(dptr); }

CUAPI cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
  SIM_REQUIRE_INIT();
  PointerInfo info;
  if (!lookup_pointer(dptr, &info)) return CUDA_ERROR_NOT_FOUND;
  if (pbase) *pbase = info.base;
  if (psize) *psize = info.size;
  return CUDA_SUCCESS;
}
CUAPI cuMemGetAddressRange(CUdeviceptr_v1*, unsigned int*, CUdeviceptr_v1) { return kLegacyPointers; }

// ---- managed and host memory ----------------------------------------------------------------------------------

CUAPI cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  SIM_REQUIRE_CTX(ctx);
  if (!dptr || bytesize == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
    return CUDA_ERROR_INVALID_VALUE;
  void* p;
  CUresult r = host_alloc(bytesize, HostKind::Managed, flags, ctx->dev->ordinal, ctx, &p);
  if (r == CUDA_SUCCESS) *dptr = reinterpret_cast<CUdeviceptr>(p);
  return r;
}

CUAPI cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  SIM_REQUIRE_CTX(ctx);
  if (!pp || bytesize == 0 ||
      (Flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)))
    return CUDA_ERROR_INVALID_VALUE;
  return host_alloc(bytesize, HostKind::Pinned, Flags, ctx->dev->ordinal, ctx, pp);
}

CUAPI cuMemAllocHost_v2(void** pp, size_t bytesize) { return cuMemHostAlloc(pp, bytesize, 0); }
CUAPI cuMemAllocHost(void** pp, unsigned int bytesize) { return cuMemHostAlloc(pp, bytesize, 0); }

CUAPI cuMemFreeHost(void* p) {
  SIM_REQUIRE_INIT();
  return host_free(p, HostKind::Pinned);
}

CUAPI cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  SIM_REQUIRE_CTX(ctx);
  PointerInfo info;
  if (!pdptr || Flags != 0 || !lookup_host(reinterpret_cast<uintptr_t>(p), &info) || info.managed)
    return CUDA_ERROR_INVALID_VALUE;
  *pdptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}
CUAPI cuMemHostGetDevicePointer(CUdeviceptr_v1*, void*, unsigned int) { return kLegacyPointers; }

CUAPI cuMemHostGetFlags(unsigned int* pFlags, void* p) {
  SIM_REQUIRE_CTX(ctx);
  PointerInfo info;
  if (!pFlags || !lookup_host(reinterpret_cast<uintptr_t>(p), &info) || info.managed) return CUDA_ERROR_INVALID_VALUE;
  *pFlags = info.host_flags;
  return CUDA_SUCCESS;
}

CUAPI cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
  SIM_REQUIRE_CTX(ctx);
  if (!p || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  void* addr = p;
  return host_alloc(bytesize, HostKind::Registered, Flags, ctx->dev->ordinal, ctx, &addr);
}
CUAPI cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) { return cuMemHostRegister_v2(p, bytesize, Flags); }

CUAPI cuMemHostUnregister(void* p) {
  SIM_REQUIRE_CTX(ctx);
  return host_free(p, HostKind::Registered);
}

// Managed-memory hints: accepted, nothing to do on a simulated device.
CUAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device) {
  SIM_REQUIRE_INIT();
  (void)devPtr, (void)count, (void)advice, (void)device;
  return CUDA_SUCCESS;
}
CUAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location) {
  SIM_REQUIRE_INIT();
  (void)devPtr, (void)count, (void)advice, (void)location;
  return CUDA_SUCCESS;
}
SIM_WITH_PER_THREAD(cuMemPrefetchAsync, _ptsz, (CUdeviceptr, size_t, CUdevice, CUstream hStream),
                    check_stream(hStream))
SIM_WITH_PER_THREAD(cuMemPrefetchAsync_v2, _ptsz, (CUdeviceptr, size_t, CUmemLocation, unsigned int, CUstream hStream),
                    check_stream(hStream))

// ---- stream-ordered allocation --------------------------------------------------------------------------------

SIM_WITH_PER_THREAD(cuMemAllocAsync, _ptsz, (CUdeviceptr* dptr, size_t bytesize, CUstream hStream),
                    pool_alloc_async(dptr, bytesize, nullptr, hStream))
SIM_WITH_PER_THREAD(cuMemAllocFromPoolAsync, _ptsz,
                    (CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
                    pool ? pool_alloc_async(dptr, bytesize, pool, hStream) : CUDA_ERROR_INVALID_VALUE)
SIM_WITH_PER_THREAD(cuMemFreeAsync, _ptsz, (CUdeviceptr dptr, CUstream hStream), free_async(dptr, hStream))

// ---- pools ----------------------------------------------------------------------------------------------------

CUAPI cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
  SIM_REQUIRE_INIT();
  if (!pool || !poolProps || poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_NOT_SUPPORTED;
  Device* dev = device(poolProps->location.id);
  if (!dev) return CUDA_ERROR_INVALID_DEVICE;
  auto* p = new CUmemPoolHandle_st(dev, &dev->resource);
  p->props = *poolProps;
  std::lock_guard lock(dev->mu);
  dev->pools.push_back(p);
  *pool = p;
  return CUDA_SUCCESS;
}

CUAPI cuMemPoolDestroy(CUmemoryPool pool) {
  SIM_REQUIRE_INIT();
  if (!valid(pool) || pool->destroyed) return CUDA_ERROR_INVALID_VALUE;
  return destroy_pool(*pool);
}

CUAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
  SIM_REQUIRE_INIT();
  if (!valid(pool) || pool->destroyed) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(pool->dev->mu);
  pool_trim(*pool, minBytesToKeep);
  return CUDA_SUCCESS;
}

CUAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  SIM_REQUIRE_INIT();
  if (!valid(pool) || pool->destroyed || !value) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(pool->dev->mu);
  auto as_int = [&] { return *static_cast<int*>(value); };
  auto as_u64 = [&] { return *static_cast<cuuint64_t*>(value); };
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: pool->reuse_follow_event_dependencies = as_int(); break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: pool->reuse_allow_opportunistic = as_int(); break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: pool->reuse_allow_internal_dependencies = as_int(); break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: pool->release_threshold = as_u64(); break;
    // The high-water marks can only be reset (to the current value) by setting 0.
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      if (as_u64() != 0) return CUDA_ERROR_INVALID_VALUE;
      pool->reserved_high = pool->reserved;
      break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      if (as_u64() != 0) return CUDA_ERROR_INVALID_VALUE;
      pool->used_high = pool->used;
      break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  SIM_REQUIRE_INIT();
  if (!valid(pool) || pool->destroyed || !value) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(pool->dev->mu);
  auto set_int = [&](int v) { *static_cast<int*>(value) = v; };
  auto set_u64 = [&](uint64_t v) { *static_cast<cuuint64_t*>(value) = v; };
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: set_int(pool->reuse_follow_event_dependencies); break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: set_int(pool->reuse_allow_opportunistic); break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: set_int(pool->reuse_allow_internal_dependencies); break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: set_u64(pool->release_threshold); break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: set_u64(pool->reserved); break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: set_u64(pool->reserved_high); break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: set_u64(pool->used); break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: set_u64(pool->used_high); break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUAPI cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count) {
  SIM_REQUIRE_INIT();
  if (!valid(pool) || (count && !map)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++)
    if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || !device(map[i].location.id))
      return CUDA_ERROR_INVALID_DEVICE;
  return CUDA_SUCCESS;  // simulated devices all see each other's memory
}

CUAPI cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool memPool, CUmemLocation* location) {
  SIM_REQUIRE_INIT();
  if (!flags || !valid(memPool) || !location) return CUDA_ERROR_INVALID_VALUE;
  *flags = location->type == CU_MEM_LOCATION_TYPE_DEVICE && location->id == memPool->dev->ordinal
               ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
               : CU_MEM_ACCESS_FLAGS_PROT_NONE;
  return CUDA_SUCCESS;
}

CUAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) { return get_device_pool(pool_out, dev, false); }
CUAPI cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) { return get_device_pool(pool, dev, true); }

CUAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  SIM_REQUIRE_INIT();
  Device* d = device(dev);
  if (!d) return CUDA_ERROR_INVALID_DEVICE;
  if (!valid(pool) || pool->destroyed || pool->dev != d) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(d->mu);
  d->current_pool = pool;
  return CUDA_SUCCESS;
}

CUAPI cuMemGetDefaultMemPool(CUmemoryPool* pool_out, CUmemLocation* location, CUmemAllocationType type) {
  SIM_REQUIRE_INIT();
  CUresult err = CUDA_SUCCESS;
  Device* dev = nullptr;
  CUmemPoolHandle_st* pool = device_pool(location, type, &err, &dev);
  if (!pool) return err;
  if (!pool_out) return CUDA_ERROR_INVALID_VALUE;
  *pool_out = pool;
  return CUDA_SUCCESS;
}

CUAPI cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type) {
  SIM_REQUIRE_INIT();
  CUresult err = CUDA_SUCCESS;
  Device* dev = nullptr;
  if (!device_pool(location, type, &err, &dev)) return err;
  return cuDeviceGetMemPool(pool, dev->ordinal);
}

CUAPI cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type, CUmemoryPool pool) {
  SIM_REQUIRE_INIT();
  CUresult err = CUDA_SUCCESS;
  Device* dev = nullptr;
  if (!device_pool(location, type, &err, &dev)) return err;
  return cuDeviceSetMemPool(dev->ordinal, pool);
}

// ---- arrays ---------------------------------------------------------------------------------------------------

CUAPI cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* pAllocateArray) {
  if (!pAllocateArray) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR desc{};
  desc.Width = pAllocateArray->Width;
  desc.Height = pAllocateArray->Height;
  desc.Format = pAllocateArray->Format;
  desc.NumChannels = pAllocateArray->NumChannels;
  return array_create(pHandle, desc);
}

CUAPI cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pAllocateArray) {
  if (!pAllocateArray) return CUDA_ERROR_INVALID_VALUE;
  return array_create(pHandle, *pAllocateArray);
}

CUAPI cuArrayDestroy(CUarray hArray) {
  SIM_REQUIRE_INIT();
  if (!valid(hArray)) return CUDA_ERROR_INVALID_HANDLE;
  Device& dev = *hArray->dev;
  std::lock_guard lock(dev.mu);
  Block* block = dev.arena.find_live(hArray->base);
  if (!block || block->owner != hArray) return CUDA_ERROR_INVALID_HANDLE;
  arena_free(dev, hArray->base, *block);
  hArray->magic.store(0, std::memory_order_relaxed);  // the handle memory is kept: stale copies read as invalid
  return CUDA_SUCCESS;
}

CUAPI cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* pArrayDescriptor, CUarray hArray) {
  SIM_REQUIRE_INIT();
  if (!valid(hArray)) return CUDA_ERROR_INVALID_HANDLE;
  if (!pArrayDescriptor) return CUDA_ERROR_INVALID_VALUE;
  pArrayDescriptor->Width = hArray->desc.Width;
  pArrayDescriptor->Height = hArray->desc.Height;
  pArrayDescriptor->Format = hArray->desc.Format;
  pArrayDescriptor->NumChannels = hArray->desc.NumChannels;
  return CUDA_SUCCESS;
}

CUAPI cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* pArrayDescriptor, CUarray hArray) {
  SIM_REQUIRE_INIT();
  if (!valid(hArray)) return CUDA_ERROR_INVALID_HANDLE;
  if (!pArrayDescriptor) return CUDA_ERROR_INVALID_VALUE;
  *pArrayDescriptor = hArray->desc;
  return CUDA_SUCCESS;
}

// ---- pointer attributes ---------------------------------------------------------------------------------------

namespace {

// Writes one attribute of a known pointer (found) or the "not a CUDA pointer" default (!found, for
// cuPointerGetAttributes). CUDA_ERROR_INVALID_VALUE for an attribute that does not apply.
CUresult write_attribute(CUpointer_attribute attribute, void* data, uintptr_t p, const PointerInfo& info, bool found,
                         bool strict) {
  auto put = [data](auto value) {
    std::memcpy(data, &value, sizeof value);
    return CUDA_SUCCESS;
  };
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: return put(found ? static_cast<CUcontext>(info.ctx) : CUcontext{});
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: return put(static_cast<unsigned int>(info.type));
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: return put(found ? static_cast<CUdeviceptr>(p) : CUdeviceptr{0});
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (found && info.type == CU_MEMORYTYPE_DEVICE && !info.managed)
        return strict ? CUDA_ERROR_INVALID_VALUE : put(static_cast<void*>(nullptr));
      return put(found ? reinterpret_cast<void*>(p) : nullptr);
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: return put(0u);
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: return put(static_cast<unsigned long long>(info.id));
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: return put(static_cast<unsigned int>(info.managed));
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: return put(found ? info.device : -1);
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
      return put(static_cast<unsigned int>(found && info.type == CU_MEMORYTYPE_DEVICE && !info.managed && !info.vmm &&
                                           !info.pool));
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: return put(static_cast<CUdeviceptr>(info.base));
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: return put(static_cast<size_t>(info.size));
    case CU_POINTER_ATTRIBUTE_MAPPED: return put(static_cast<unsigned int>(found));
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      return put(static_cast<unsigned long long>(info.vmm ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : 0));
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: return put(0u);
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      return put(static_cast<unsigned int>(found ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE
                                                 : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE));
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: return put(static_cast<CUmemoryPool>(info.pool));
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: return put(static_cast<size_t>(info.size));
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: return put(reinterpret_cast<void*>(info.base));
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: return put(static_cast<unsigned long long>(info.id));
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: return put(0u);
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace

CUAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  SIM_REQUIRE_INIT();
  if (!data) return CUDA_ERROR_INVALID_VALUE;
  PointerInfo info;
  if (!lookup_pointer(ptr, &info)) return CUDA_ERROR_INVALID_VALUE;
  return write_attribute(attribute, data, ptr, info, true, true);
}

// Unlike cuPointerGetAttribute, a pointer that is not CUDA memory is not an error: every attribute gets its
// "none" value.
CUAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute* attributes, void** data,
                             CUdeviceptr ptr) {
  SIM_REQUIRE_INIT();
  if (numAttributes && (!attributes || !data)) return CUDA_ERROR_INVALID_VALUE;
  PointerInfo info;
  bool found = lookup_pointer(ptr, &info);
  if (!found) info = PointerInfo{};
  for (unsigned int i = 0; i < numAttributes; i++) {
    if (!data[i]) continue;
    if (CUresult r = write_attribute(attributes[i], data[i], ptr, info, found, false); r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}
