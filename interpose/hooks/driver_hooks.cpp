// Wrappers for every driver memory API (DESIGN.md §3). Each calls the real function with the caller's
// exact arguments and returns its result untouched; allocations are recorded after they succeed, frees
// before they run.
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "interpose/recording/debug_log.h"
#include "interpose/hooks/driver_table.h"
#include "interpose/hooks/real_dlsym.h"
#include "interpose/recording/recorder.h"

using gpumemtrace::format::Api;
using namespace gpumemtrace::interpose;

#define GMT_EXPORT extern "C" __attribute__((visibility("default")))

// Declared by cuda.h only under per-thread-default-stream or internal builds.
GMT_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream stream);
GMT_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                 CUstream stream);
GMT_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream);
// The CUDA 11.3 lookup ABI; cuda.h renames cuGetProcAddress to the 12.0 one.
GMT_EXPORT CUresult gmt_cuGetProcAddress_v1(const char* symbol, void** pfn, int version, cuuint64_t flags)
    __asm__("cuGetProcAddress");

namespace {

template <typename Fn>
Fn real(DriverFn fn) {
  return reinterpret_cast<Fn>(real_driver_function(fn));
}

uint64_t as_u64(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// Inside a runtime hook, the driver call that carries the runtime call's own allocation is recorded under
// the runtime API; anything else the runtime allocates on the way is recorded under the driver API.
void on_alloc(Api driver_api, int device, uint64_t address, uint64_t size, uint64_t stream = 0,
              uint64_t pool = 0) {
  HookState& state = hook_state();
  Api api = driver_api;
  if (state.runtime_depth && !state.recorded && (state.runtime_size == 0 || state.runtime_size == size)) {
    api = state.runtime_api;
    state.recorded = true;
  }
  record_alloc(api, device, address, size, stream, pool);
}

void on_free(Api driver_api, uint64_t address, uint64_t stream = 0) {
  HookState& state = hook_state();
  if (state.runtime_depth && state.recorded && state.runtime_address == address) return;
  record_free(driver_api, address, stream);
}

// Pools the program created, so that an out-of-memory failure can say what each one holds.
class CreatedPools {
 public:
  void add(CUmemoryPool pool, int device) {
    std::lock_guard lock(mutex_);
    pools_.push_back({pool, device});
  }
  void remove(CUmemoryPool pool) {
    std::lock_guard lock(mutex_);
    std::erase_if(pools_, [&](const auto& entry) { return entry.first == pool; });
  }
  std::vector<CUmemoryPool> on_device(int device) {
    std::lock_guard lock(mutex_);
    std::vector<CUmemoryPool> out;
    for (const auto& [pool, pool_device] : pools_) {
      if (pool_device == device) out.push_back(pool);
    }
    return out;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<CUmemoryPool, int>> pools_;
};
CreatedPools g_created_pools;

// Records reserved and used memory of every pool on the device: where freed memory may be waiting.
void record_pools_of(int device) {
  auto attribute = real<decltype(&cuMemPoolGetAttribute)>(DriverFn::MemPoolGetAttribute);
  if (!attribute || device < 0) return;
  std::vector<CUmemoryPool> pools = g_created_pools.on_device(device);
  for (DriverFn which : {DriverFn::DeviceGetDefaultMemPool, DriverFn::DeviceGetMemPool}) {
    auto get = real<CUresult (*)(CUmemoryPool*, CUdevice)>(which);
    CUmemoryPool pool = nullptr;
    if (get && get(&pool, device) == CUDA_SUCCESS && pool &&
        std::find(pools.begin(), pools.end(), pool) == pools.end()) {
      pools.push_back(pool);
    }
  }
  for (CUmemoryPool pool : pools) {
    cuuint64_t reserved = 0, used = 0;
    if (attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) != CUDA_SUCCESS) continue;
    if (attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) != CUDA_SUCCESS) continue;
    record_pool_usage(as_u64(pool), device, reserved, used);
  }
}

void on_alloc_failed(Api driver_api, int device, uint64_t size, CUresult error) {
  HookState& state = hook_state();
  Api api = driver_api;
  if (state.runtime_depth && !state.recorded) {
    api = state.runtime_api;
    state.recorded = true;
  }
  size_t free_bytes = 0, total_bytes = 0;
  if (error == CUDA_ERROR_OUT_OF_MEMORY) {
    auto info = real<CUresult (*)(size_t*, size_t*)>(DriverFn::MemGetInfo);
    if (!info || info(&free_bytes, &total_bytes) != CUDA_SUCCESS) free_bytes = total_bytes = 0;
  }
  record_alloc_failed(api, device, size, static_cast<uint64_t>(error), free_bytes, total_bytes);
  if (error == CUDA_ERROR_OUT_OF_MEMORY) record_pools_of(device);
}

void on_free_result(Api driver_api, uint64_t address, CUresult rc) {
  if (rc != CUDA_SUCCESS) record_free_failed(driver_api, address, static_cast<uint64_t>(rc));
}

size_t array_element_bytes(CUarray_format format, unsigned channels) {
  size_t per_channel = 1;
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
      per_channel = 2;
      break;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
      per_channel = 4;
      break;
    default:
      break;
  }
  return per_channel * (channels ? channels : 1);
}

size_t array_bytes(size_t width, size_t height, size_t depth, CUarray_format format, unsigned channels) {
  return (width ? width : 1) * (height ? height : 1) * (depth ? depth : 1) * array_element_bytes(format, channels);
}

// Replaces a real driver function pointer by our wrapper, if we wrap it.
void swap_in_wrapper(void** pfn) {
  if (void* wrapper = wrapper_for_real(*pfn)) *pfn = wrapper;
}

}  // namespace

// ---- lookups ----

GMT_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult* status) {
  auto fn = real<decltype(&cuGetProcAddress_v2)>(DriverFn::GetProcAddress_v2);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(symbol, pfn, version, flags, status);
  if (rc == CUDA_SUCCESS && pfn && *pfn) swap_in_wrapper(pfn);
  return rc;
}

CUresult gmt_cuGetProcAddress_v1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  auto fn = real<decltype(&gmt_cuGetProcAddress_v1)>(DriverFn::GetProcAddress);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(symbol, pfn, version, flags);
  if (rc == CUDA_SUCCESS && pfn && *pfn) swap_in_wrapper(pfn);
  return rc;
}

// ---- device memory ----

GMT_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  auto fn = real<decltype(&cuMemAlloc_v2)>(DriverFn::MemAlloc);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(dptr, bytesize);
  if (!tracing_active()) return rc;
  if (rc == CUDA_SUCCESS) on_alloc(Api::cuMemAlloc, current_device(), *dptr, bytesize);
  else on_alloc_failed(Api::cuMemAlloc, current_device(), bytesize, rc);
  return rc;
}

GMT_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height,
                                       unsigned int element_size) {
  auto fn = real<decltype(&cuMemAllocPitch_v2)>(DriverFn::MemAllocPitch);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(dptr, pitch, width, height, element_size);
  if (!tracing_active()) return rc;
  if (rc == CUDA_SUCCESS) on_alloc(Api::cuMemAllocPitch, current_device(), *dptr, *pitch * height);
  else on_alloc_failed(Api::cuMemAllocPitch, current_device(), width * height, rc);
  return rc;
}

GMT_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  auto fn = real<decltype(&cuMemFree_v2)>(DriverFn::MemFree);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (!tracing_active() || dptr == 0) return fn(dptr);
  on_free(Api::cuMemFree, dptr);
  CUresult rc = fn(dptr);
  on_free_result(Api::cuMemFree, dptr, rc);
  return rc;
}

GMT_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  auto fn = real<decltype(&cuMemAllocManaged)>(DriverFn::MemAllocManaged);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(dptr, bytesize, flags);
  if (!tracing_active()) return rc;
  if (rc == CUDA_SUCCESS) on_alloc(Api::cuMemAllocManaged, current_device(), *dptr, bytesize);
  else on_alloc_failed(Api::cuMemAllocManaged, current_device(), bytesize, rc);
  return rc;
}

// ---- pinned host memory ----

GMT_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int flags) {
  auto fn = real<decltype(&cuMemHostAlloc)>(DriverFn::MemHostAlloc);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(pp, bytesize, flags);
  if (!tracing_active()) return rc;
  if (rc == CUDA_SUCCESS) on_alloc(Api::cuMemHostAlloc, -1, as_u64(*pp), bytesize);
  else on_alloc_failed(Api::cuMemHostAlloc, -1, bytesize, rc);
  return rc;
}

GMT_EXPORT CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) {
  auto fn = real<decltype(&cuMemAllocHost_v2)>(DriverFn::MemAllocHost);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(pp, bytesize);
  if (!tracing_active()) return rc;
  if (rc == CUDA_SUCCESS) on_alloc(Api::cuMemAllocHost, -1, as_u64(*pp), bytesize);
  else on_alloc_failed(Api::cuMemAllocHost, -1, bytesize, rc);
  return rc;
}

GMT_EXPORT CUresult cuMemFreeHost(void* p) {
  auto fn = real<decltype(&cuMemFreeHost)>(DriverFn::MemFreeHost);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (!tracing_active() || !p) return fn(p);
  on_free(Api::cuMemFreeHost, as_u64(p));
  CUresult rc = fn(p);
  on_free_result(Api::cuMemFreeHost, as_u64(p), rc);
  return rc;
}

// ---- stream-ordered allocation ----

namespace {

CUresult alloc_async(DriverFn which, CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  auto fn = real<CUresult (*)(CUdeviceptr*, size_t, CUstream)>(which);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(dptr, bytesize, stream);
  if (!tracing_active()) return rc;
  if (rc == CUDA_SUCCESS) on_alloc(Api::cuMemAllocAsync, current_device(), *dptr, bytesize, as_u64(stream));
  else on_alloc_failed(Api::cuMemAllocAsync, current_device(), bytesize, rc);
  return rc;
}

CUresult alloc_from_pool(DriverFn which, CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream stream) {
  auto fn = real<CUresult (*)(CUdeviceptr*, size_t, CUmemoryPool, CUstream)>(which);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(dptr, bytesize, pool, stream);
  if (!tracing_active()) return rc;
  if (rc == CUDA_SUCCESS) {
    on_alloc(Api::cuMemAllocFromPoolAsync, current_device(), *dptr, bytesize, as_u64(stream), as_u64(pool));
  } else {
    on_alloc_failed(Api::cuMemAllocFromPoolAsync, current_device(), bytesize, rc);
  }
  return rc;
}

CUresult free_async(DriverFn which, CUdeviceptr dptr, CUstream stream) {
  auto fn = real<CUresult (*)(CUdeviceptr, CUstream)>(which);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (!tracing_active() || dptr == 0) return fn(dptr, stream);
  on_free(Api::cuMemFreeAsync, dptr, as_u64(stream));
  CUresult rc = fn(dptr, stream);
  on_free_result(Api::cuMemFreeAsync, dptr, rc);
  return rc;
}

}  // namespace

GMT_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  return alloc_async(DriverFn::MemAllocAsync, dptr, bytesize, stream);
}
CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  return alloc_async(DriverFn::MemAllocAsync_ptsz, dptr, bytesize, stream);
}
GMT_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream stream) {
  return alloc_from_pool(DriverFn::MemAllocFromPoolAsync, dptr, bytesize, pool, stream);
}
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream stream) {
  return alloc_from_pool(DriverFn::MemAllocFromPoolAsync_ptsz, dptr, bytesize, pool, stream);
}
GMT_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  return free_async(DriverFn::MemFreeAsync, dptr, stream);
}
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream) {
  return free_async(DriverFn::MemFreeAsync_ptsz, dptr, stream);
}

// ---- memory pools ----

GMT_EXPORT CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
  auto fn = real<decltype(&cuMemPoolCreate)>(DriverFn::MemPoolCreate);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(pool, props);
  if (rc == CUDA_SUCCESS && tracing_active()) {
    int device = props ? props->location.id : -1;
    g_created_pools.add(*pool, device);
    record_pool_create(as_u64(*pool), device);
  }
  return rc;
}

GMT_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  auto fn = real<decltype(&cuMemPoolDestroy)>(DriverFn::MemPoolDestroy);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (tracing_active()) {
    g_created_pools.remove(pool);
    record_pool_destroy(as_u64(pool));
  }
  return fn(pool);
}

GMT_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t min_bytes_to_keep) {
  auto fn = real<decltype(&cuMemPoolTrimTo)>(DriverFn::MemPoolTrimTo);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(pool, min_bytes_to_keep);
  if (rc != CUDA_SUCCESS || !tracing_active()) return rc;
  cuuint64_t reserved = 0, used = 0;
  if (auto attribute = real<decltype(&cuMemPoolGetAttribute)>(DriverFn::MemPoolGetAttribute)) {
    attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved);
    attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used);
  }
  record_pool_trim(as_u64(pool), min_bytes_to_keep, reserved, used);
  return rc;
}

// ---- virtual memory management ----

GMT_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                                unsigned long long flags) {
  auto fn = real<decltype(&cuMemCreate)>(DriverFn::MemCreate);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(handle, size, prop, flags);
  if (!tracing_active()) return rc;
  int device = prop ? prop->location.id : -1;
  if (rc == CUDA_SUCCESS) on_alloc(Api::cuMemCreate, device, *handle, size);
  else on_alloc_failed(Api::cuMemCreate, device, size, rc);
  return rc;
}

GMT_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  auto fn = real<decltype(&cuMemRelease)>(DriverFn::MemRelease);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (!tracing_active()) return fn(handle);
  on_free(Api::cuMemRelease, handle);
  CUresult rc = fn(handle);
  on_free_result(Api::cuMemRelease, handle, rc);
  return rc;
}

GMT_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                             unsigned long long flags) {
  auto fn = real<decltype(&cuMemMap)>(DriverFn::MemMap);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(ptr, size, offset, handle, flags);
  if (rc == CUDA_SUCCESS && tracing_active()) record_mem_map(ptr, size, handle, offset);
  return rc;
}

GMT_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  auto fn = real<decltype(&cuMemUnmap)>(DriverFn::MemUnmap);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (tracing_active()) record_mem_unmap(ptr, size);
  return fn(ptr, size);
}

GMT_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                        unsigned long long flags) {
  auto fn = real<decltype(&cuMemAddressReserve)>(DriverFn::MemAddressReserve);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(ptr, size, alignment, addr, flags);
  if (rc == CUDA_SUCCESS && tracing_active()) record_address_reserve(*ptr, size);
  return rc;
}

GMT_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  auto fn = real<decltype(&cuMemAddressFree)>(DriverFn::MemAddressFree);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (tracing_active()) record_address_free(ptr, size);
  return fn(ptr, size);
}

// ---- what the program asked about free memory ----

GMT_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  auto fn = real<decltype(&cuMemGetInfo_v2)>(DriverFn::MemGetInfo);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(free_bytes, total_bytes);
  if (rc == CUDA_SUCCESS && tracing_active() && free_bytes && total_bytes) {
    record_mem_info(current_device(), *free_bytes, *total_bytes);
  }
  return rc;
}

// ---- arrays ----

GMT_EXPORT CUresult cuArrayCreate_v2(CUarray* handle, const CUDA_ARRAY_DESCRIPTOR* desc) {
  auto fn = real<decltype(&cuArrayCreate_v2)>(DriverFn::ArrayCreate);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(handle, desc);
  if (!tracing_active() || !desc) return rc;
  size_t bytes = array_bytes(desc->Width, desc->Height, 1, desc->Format, desc->NumChannels);
  if (rc == CUDA_SUCCESS) on_alloc(Api::cuArrayCreate, current_device(), as_u64(*handle), bytes);
  else on_alloc_failed(Api::cuArrayCreate, current_device(), bytes, rc);
  return rc;
}

GMT_EXPORT CUresult cuArray3DCreate_v2(CUarray* handle, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  auto fn = real<decltype(&cuArray3DCreate_v2)>(DriverFn::Array3DCreate);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(handle, desc);
  if (!tracing_active() || !desc) return rc;
  size_t bytes = array_bytes(desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels);
  if (rc == CUDA_SUCCESS) on_alloc(Api::cuArray3DCreate, current_device(), as_u64(*handle), bytes);
  else on_alloc_failed(Api::cuArray3DCreate, current_device(), bytes, rc);
  return rc;
}

GMT_EXPORT CUresult cuArrayDestroy(CUarray handle) {
  auto fn = real<decltype(&cuArrayDestroy)>(DriverFn::ArrayDestroy);
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (!tracing_active() || !handle) return fn(handle);
  on_free(Api::cuArrayDestroy, as_u64(handle));
  CUresult rc = fn(handle);
  on_free_result(Api::cuArrayDestroy, as_u64(handle), rc);
  return rc;
}

// ---- the table ----

namespace gpumemtrace::interpose {

namespace {

struct Entry {
  const char* name;
  void* wrapper;  // nullptr: called by the tracer, not wrapped
  std::atomic<void*> real{nullptr};
};

Entry g_entries[] = {
    {"cuGetProcAddress", reinterpret_cast<void*>(&gmt_cuGetProcAddress_v1)},
    {"cuGetProcAddress_v2", reinterpret_cast<void*>(&cuGetProcAddress_v2)},
    {"cuMemAlloc_v2", reinterpret_cast<void*>(&cuMemAlloc_v2)},
    {"cuMemAllocPitch_v2", reinterpret_cast<void*>(&cuMemAllocPitch_v2)},
    {"cuMemFree_v2", reinterpret_cast<void*>(&cuMemFree_v2)},
    {"cuMemAllocManaged", reinterpret_cast<void*>(&cuMemAllocManaged)},
    {"cuMemHostAlloc", reinterpret_cast<void*>(&cuMemHostAlloc)},
    {"cuMemAllocHost_v2", reinterpret_cast<void*>(&cuMemAllocHost_v2)},
    {"cuMemFreeHost", reinterpret_cast<void*>(&cuMemFreeHost)},
    {"cuMemAllocAsync", reinterpret_cast<void*>(&cuMemAllocAsync)},
    {"cuMemAllocAsync_ptsz", reinterpret_cast<void*>(&cuMemAllocAsync_ptsz)},
    {"cuMemAllocFromPoolAsync", reinterpret_cast<void*>(&cuMemAllocFromPoolAsync)},
    {"cuMemAllocFromPoolAsync_ptsz", reinterpret_cast<void*>(&cuMemAllocFromPoolAsync_ptsz)},
    {"cuMemFreeAsync", reinterpret_cast<void*>(&cuMemFreeAsync)},
    {"cuMemFreeAsync_ptsz", reinterpret_cast<void*>(&cuMemFreeAsync_ptsz)},
    {"cuMemPoolCreate", reinterpret_cast<void*>(&cuMemPoolCreate)},
    {"cuMemPoolDestroy", reinterpret_cast<void*>(&cuMemPoolDestroy)},
    {"cuMemPoolTrimTo", reinterpret_cast<void*>(&cuMemPoolTrimTo)},
    {"cuMemCreate", reinterpret_cast<void*>(&cuMemCreate)},
    {"cuMemRelease", reinterpret_cast<void*>(&cuMemRelease)},
    {"cuMemMap", reinterpret_cast<void*>(&cuMemMap)},
    {"cuMemUnmap", reinterpret_cast<void*>(&cuMemUnmap)},
    {"cuMemAddressReserve", reinterpret_cast<void*>(&cuMemAddressReserve)},
    {"cuMemAddressFree", reinterpret_cast<void*>(&cuMemAddressFree)},
    {"cuMemGetInfo_v2", reinterpret_cast<void*>(&cuMemGetInfo_v2)},
    {"cuArrayCreate_v2", reinterpret_cast<void*>(&cuArrayCreate_v2)},
    {"cuArray3DCreate_v2", reinterpret_cast<void*>(&cuArray3DCreate_v2)},
    {"cuArrayDestroy", reinterpret_cast<void*>(&cuArrayDestroy)},
    {"cuCtxGetDevice", nullptr},
    {"cuMemPoolGetAttribute", nullptr},
    {"cuDeviceGetMemPool", nullptr},
    {"cuDeviceGetDefaultMemPool", nullptr},
};
static_assert(sizeof(g_entries) / sizeof(g_entries[0]) == static_cast<size_t>(DriverFn::Count));

bool is_wrapper(void* fn) {
  for (const Entry& entry : g_entries) {
    if (entry.wrapper == fn) return true;
  }
  return false;
}

std::mutex g_driver_mutex;
std::atomic<bool> g_driver_known{false};

void resolve_all(void* handle) {
  for (Entry& entry : g_entries) {
    void* fn = real_dlsym(handle, entry.name);
    // Never take one of our own wrappers for the real function: that would call itself forever.
    if (fn && !is_wrapper(fn)) entry.real.store(fn, std::memory_order_release);
  }
  g_driver_known.store(true, std::memory_order_release);
}

void* driver_handle_for(void* real_function) {
  Dl_info info;
  if (real_function && dladdr(real_function, &info) && info.dli_fname) {
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  }
  return dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
}

}  // namespace

void adopt_driver(void* real_function) {
  if (g_driver_known.load(std::memory_order_acquire)) return;
  BusyGuard busy;
  std::lock_guard lock(g_driver_mutex);
  if (g_driver_known.load(std::memory_order_relaxed)) return;
  void* handle = driver_handle_for(real_function);
  if (!handle) return;
  resolve_all(handle);
  debug_log("driver functions resolved%s", real_function ? " from the program's lookup" : " from libcuda.so.1");
}

void* real_driver_function(DriverFn fn) {
  Entry& entry = g_entries[static_cast<int>(fn)];
  void* real = entry.real.load(std::memory_order_acquire);
  if (real) return real;
  // A program linked with -lcuda calls our exported names directly: find the driver it loaded.
  adopt_driver(nullptr);
  return entry.real.load(std::memory_order_acquire);
}

void* wrapper_for_real(void* real_function) {
  if (!real_function) return nullptr;
  for (Entry& entry : g_entries) {
    if (entry.wrapper && entry.real.load(std::memory_order_relaxed) == real_function) return entry.wrapper;
  }
  return nullptr;
}

int current_device() {
  auto get = reinterpret_cast<CUresult (*)(CUdevice*)>(real_driver_function(DriverFn::CtxGetDevice));
  CUdevice device = -1;
  if (!get || get(&device) != CUDA_SUCCESS) return -1;
  return device;
}

void* wrapper_for_name(const char* name) {
  for (Entry& entry : g_entries) {
    if (entry.wrapper && std::strcmp(entry.name, name) == 0) return entry.wrapper;
  }
  return nullptr;
}

}  // namespace gpumemtrace::interpose
