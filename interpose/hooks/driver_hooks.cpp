// Wrappers for every driver memory API (docs/cuda-memory-paths.md). Each calls the real function with the
// caller's exact arguments and returns its result untouched; allocations are recorded after they succeed,
// frees before they run. The functions are listed in driver_functions.def; each wrapper below only says
// what its call means for the trace, and four templates do the calling and recording.
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string_view>
#include <vector>

#include "interpose/cupti/cupti_backend.h"
#include "interpose/hooks/driver_table.h"
#include "interpose/hooks/wrapper_helpers.h"
#include "interpose/base/real_dlsym.h"
#include "interpose/nvml/device_states.h"
#include "interpose/base/debug_log.h"
#include "interpose/recording/recorder.h"
#include "interpose/torch/torch_hook.h"

using gpumemtrace::format::Api;
using namespace gpumemtrace::interpose;
namespace trace = gpumemtrace::trace;

// Declared by cuda.h only under per-thread-default-stream or internal builds.
GMT_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream stream);
GMT_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                 CUstream stream);
GMT_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream);
// Declared by cuda.h only for internal builds (cuCtxCreate is cuCtxCreate_v4 there).
GMT_EXPORT CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev);
// The CUDA 11.3 lookup ABI; cuda.h renames cuGetProcAddress to the 12.0 one.
GMT_EXPORT CUresult gmt_cuGetProcAddress_v1(const char* symbol, void** pfn, int version, cuuint64_t flags)
    __asm__("cuGetProcAddress");

namespace {

// The C type of each driver function, from its declaration.
template <DriverFn F>
struct DriverFunction;
#define GMT_DRIVER_WRAPPED(id, function) \
  template <>                            \
  struct DriverFunction<DriverFn::id> {  \
    using Type = decltype(&function);    \
  };
#define GMT_DRIVER_MEMORY(id, function, api) GMT_DRIVER_WRAPPED(id, function)
#define GMT_DRIVER_CALLED GMT_DRIVER_WRAPPED
#include "interpose/hooks/driver_functions.def"
#undef GMT_DRIVER_WRAPPED
#undef GMT_DRIVER_MEMORY
#undef GMT_DRIVER_CALLED

// The API each memory row of driver_functions.def records its allocations and frees under.
template <DriverFn F>
constexpr Api kRecordedApi = Api::Count;
#define GMT_DRIVER_WRAPPED(id, function)
#define GMT_DRIVER_MEMORY(id, function, api) \
  template <>                                \
  constexpr Api kRecordedApi<DriverFn::id> = Api::api;
#define GMT_DRIVER_CALLED GMT_DRIVER_WRAPPED
#include "interpose/hooks/driver_functions.def"
#undef GMT_DRIVER_WRAPPED
#undef GMT_DRIVER_MEMORY
#undef GMT_DRIVER_CALLED

template <DriverFn F>
typename DriverFunction<F>::Type real() {
  return reinterpret_cast<typename DriverFunction<F>::Type>(real_driver_function(F));
}

// Inside a runtime hook, the driver call that carries the runtime call's own allocation is recorded under
// the runtime API; anything else the runtime allocates on the way is recorded under the driver API.
void on_alloc(Api driver_api, int device, uint64_t address, uint64_t size, uint64_t stream, uint64_t pool) {
  HookState& state = hook_state();
  Api api = driver_api;
  // A cuMemCreate handle is never what a runtime call returns: it keeps its own name.
  if (state.runtime_depth && !state.recorded && driver_api != Api::cuMemCreate &&
      (state.runtime_size == 0 || state.runtime_size == size)) {
    api = state.runtime_api;
    state.recorded = true;
  }
  record(trace::Alloc{{}, api, device, address, size, 0, stream, pool});
  torch::on_allocation();
}

void on_free(Api driver_api, uint64_t address, uint64_t stream) {
  HookState& state = hook_state();
  if (state.runtime_depth && state.recorded && state.runtime_address == address) return;
  record(trace::Free{{}, driver_api, address, stream});
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

// A pool's reserved and used memory now; false if the driver would not say.
bool pool_usage(CUmemoryPool pool, cuuint64_t& reserved, cuuint64_t& used) {
  auto attribute = real<DriverFn::MemPoolGetAttribute>();
  return attribute && attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) == CUDA_SUCCESS &&
         attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) == CUDA_SUCCESS;
}

// Records reserved and used memory of every pool on the device: where freed memory may be waiting.
void record_pools_of(int device) {
  if (device < 0) return;
  std::vector<CUmemoryPool> pools = g_created_pools.on_device(device);
  auto add_device_pool = [&](auto get) {
    CUmemoryPool pool = nullptr;
    if (get && get(&pool, device) == CUDA_SUCCESS && pool && std::find(pools.begin(), pools.end(), pool) == pools.end())
      pools.push_back(pool);
  };
  add_device_pool(real<DriverFn::DeviceGetDefaultMemPool>());
  add_device_pool(real<DriverFn::DeviceGetMemPool>());
  for (CUmemoryPool pool : pools) {
    cuuint64_t reserved = 0, used = 0;
    if (pool_usage(pool, reserved, used)) record(trace::PoolUsage{{}, as_u64(pool), device, reserved, used});
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
    gpumemtrace::interpose::cupti::flush();  // what CUPTI holds happened before the failure
    auto info = real<DriverFn::MemGetInfo>();
    if (!info || info(&free_bytes, &total_bytes) != CUDA_SUCCESS) free_bytes = total_bytes = 0;
  }
  record(trace::AllocFailed{{}, api, device, size, 0, static_cast<uint64_t>(error), free_bytes, total_bytes});
  if (error == CUDA_ERROR_OUT_OF_MEMORY) {
    record_pools_of(device);
    nvml_states::on_out_of_memory();
    sync_trace();  // the process may be about to die of it
  }
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

template <typename Descriptor>
uint64_t array_bytes(const Descriptor& desc, size_t depth) {
  return (desc.Width ? desc.Width : 1) * (desc.Height ? desc.Height : 1) * (depth ? depth : 1) *
         array_element_bytes(desc.Format, desc.NumChannels);
}

// ---- the four shapes of a wrapper ----

// Marks the real call as one this wrapper records, for CUPTI's callback inside it (interpose/cupti: the
// activity record of a call the hooks recorded is dropped).
class RecordedCall {
 public:
  // Without CUPTI nobody asks: no thread-local access on the hot path.
  RecordedCall() : active_(cupti::active() && tracing_active()) {
    if (active_) ++hook_state().driver_wrapper_depth;
  }
  ~RecordedCall() {
    if (active_) --hook_state().driver_wrapper_depth;
  }
  RecordedCall(const RecordedCall&) = delete;
  RecordedCall& operator=(const RecordedCall&) = delete;

 private:
  bool active_;
};

// What a successful allocation made.
struct Made {
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t stream = 0;
  uint64_t pool = 0;
};

// An allocation: recorded after the call, with `made()` reading the out-parameters on success and
// `requested` bytes on failure.
template <DriverFn F, typename MadeFn, typename... Args>
CUresult allocation(int device, uint64_t requested, MadeFn&& made, Args... args) {
  constexpr Api api = kRecordedApi<F>;
  static_assert(api != Api::Count, "an allocating driver function is a GMT_DRIVER_MEMORY row");
  auto fn = real<F>();
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (tracing_active()) nvml_states::before_allocation();
  CUresult rc;
  {
    RecordedCall recorded;
    rc = fn(args...);
  }
  if (!tracing_active()) return rc;
  if (device == kCurrentDevice) device = current_device();
  if (rc == CUDA_SUCCESS) {
    Made m = made();
    on_alloc(api, device, m.address, m.size, m.stream, m.pool);
  } else {
    on_alloc_failed(api, device, requested, rc);
  }
  return rc;
}

// A free: recorded before the call (the address may be reused by another thread the moment it returns),
// and a refusal after it. Freeing nothing (0) is passed through unrecorded.
template <DriverFn F, typename... Args>
CUresult release(uint64_t address, uint64_t stream, Args... args) {
  constexpr Api api = kRecordedApi<F>;
  static_assert(api != Api::Count, "a freeing driver function is a GMT_DRIVER_MEMORY row");
  auto fn = real<F>();
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (!tracing_active() || address == 0) return fn(args...);
  on_free(api, address, stream);
  RecordedCall recorded;
  CUresult rc = fn(args...);
  if (rc != CUDA_SUCCESS) record(trace::FreeFailed{{}, api, address, static_cast<uint64_t>(rc)});
  return rc;
}

// Something that takes effect when the call succeeds: recorded after it.
template <DriverFn F, typename Record, typename... Args>
CUresult recorded_after(Record&& record, Args... args) {
  auto fn = real<F>();
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc;
  {
    RecordedCall recorded;
    rc = fn(args...);
  }
  if (rc == CUDA_SUCCESS && tracing_active()) record();
  return rc;
}

// Something that ends a resource: recorded before the call, like a free.
template <DriverFn F, typename Record, typename... Args>
CUresult recorded_before(Record&& record, Args... args) {
  auto fn = real<F>();
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  if (!tracing_active()) return fn(args...);
  record();
  RecordedCall recorded;
  return fn(args...);
}

// Replaces a real driver function pointer by our wrapper, if we wrap it.
template <DriverFn F, typename... Args>
CUresult lookup(void** pfn, Args... args) {
  auto fn = real<F>();
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = fn(args...);
  if (rc == CUDA_SUCCESS && pfn && *pfn) {
    if (void* wrapper = wrapper_for_real(*pfn)) *pfn = wrapper;
  }
  return rc;
}

}  // namespace

// ---- lookups ----

GMT_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult* status) {
  return lookup<DriverFn::GetProcAddress_v2>(pfn, symbol, pfn, version, flags, status);
}

CUresult gmt_cuGetProcAddress_v1(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  return lookup<DriverFn::GetProcAddress>(pfn, symbol, pfn, version, flags);
}

// ---- device, managed and pinned host memory ----

GMT_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return allocation<DriverFn::MemAlloc>(kCurrentDevice, bytesize, [&] { return Made{*dptr, bytesize}; },
                                        dptr, bytesize);
}

GMT_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height,
                                       unsigned int element_size) {
  return allocation<DriverFn::MemAllocPitch>(kCurrentDevice, width * height,
                                             [&] { return Made{*dptr, *pitch * height}; }, dptr, pitch, width, height,
                                             element_size);
}

GMT_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  return release<DriverFn::MemFree>(dptr, 0, dptr);
}

GMT_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  return allocation<DriverFn::MemAllocManaged>(kCurrentDevice, bytesize,
                                               [&] { return Made{*dptr, bytesize}; }, dptr, bytesize, flags);
}

GMT_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int flags) {
  return allocation<DriverFn::MemHostAlloc>(kHost, bytesize,
                                            [&] { return Made{as_u64(*pp), bytesize}; }, pp, bytesize, flags);
}

GMT_EXPORT CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) {
  return allocation<DriverFn::MemAllocHost>(kHost, bytesize,
                                            [&] { return Made{as_u64(*pp), bytesize}; }, pp, bytesize);
}

GMT_EXPORT CUresult cuMemFreeHost(void* p) {
  return release<DriverFn::MemFreeHost>(as_u64(p), 0, p);
}

// ---- stream-ordered allocation (each also with the per-thread default stream, _ptsz) ----

GMT_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  return allocation<DriverFn::MemAllocAsync>(kCurrentDevice, bytesize,
                                             [&] { return Made{*dptr, bytesize, as_u64(stream)}; }, dptr, bytesize,
                                             stream);
}
CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  return allocation<DriverFn::MemAllocAsync_ptsz>(kCurrentDevice, bytesize,
                                                  [&] { return Made{*dptr, bytesize, as_u64(stream)}; }, dptr,
                                                  bytesize, stream);
}

GMT_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream stream) {
  return allocation<DriverFn::MemAllocFromPoolAsync>(
      kCurrentDevice, bytesize,
      [&] { return Made{*dptr, bytesize, as_u64(stream), as_u64(pool)}; }, dptr, bytesize, pool, stream);
}
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream stream) {
  return allocation<DriverFn::MemAllocFromPoolAsync_ptsz>(
      kCurrentDevice, bytesize,
      [&] { return Made{*dptr, bytesize, as_u64(stream), as_u64(pool)}; }, dptr, bytesize, pool, stream);
}

GMT_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  return release<DriverFn::MemFreeAsync>(dptr, as_u64(stream), dptr, stream);
}
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream) {
  return release<DriverFn::MemFreeAsync_ptsz>(dptr, as_u64(stream), dptr, stream);
}

// ---- memory pools ----

GMT_EXPORT CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
  return recorded_after<DriverFn::MemPoolCreate>(
      [&] {
        int device = props ? props->location.id : -1;
        g_created_pools.add(*pool, device);
        record(trace::PoolCreate{{{}, as_u64(*pool), device}});
      },
      pool, props);
}

GMT_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  return recorded_before<DriverFn::MemPoolDestroy>(
      [&] {
        g_created_pools.remove(pool);
        record(trace::PoolDestroy{{{}, as_u64(pool), trace::kNoDevice}});
      },
      pool);
}

GMT_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t min_bytes_to_keep) {
  return recorded_after<DriverFn::MemPoolTrimTo>(
      [&] {
        cuuint64_t reserved = 0, used = 0;
        pool_usage(pool, reserved, used);
        record(trace::PoolTrim{{}, as_u64(pool), min_bytes_to_keep, reserved, used});
      },
      pool, min_bytes_to_keep);
}

// ---- virtual memory management: physical memory, mappings, address reservations ----

GMT_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                                unsigned long long flags) {
  return allocation<DriverFn::MemCreate>(prop ? prop->location.id : -1, size,
                                         [&] { return Made{*handle, size}; }, handle, size, prop, flags);
}

GMT_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  return release<DriverFn::MemRelease>(handle, 0, handle);
}

GMT_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                             unsigned long long flags) {
  return recorded_after<DriverFn::MemMap>(
      [&] {
        record(trace::MemMap{{}, ptr, size, handle, offset});
        HookState& state = hook_state();
        if (state.runtime_depth) {
          state.mapped_low = ptr;
          state.mapped_high = ptr + size;
        }
      },
      ptr, size, offset, handle, flags);
}

GMT_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  return recorded_before<DriverFn::MemUnmap>([&] { record(trace::MemUnmap{{{}, ptr, size}}); }, ptr, size);
}

GMT_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                        unsigned long long flags) {
  return recorded_after<DriverFn::MemAddressReserve>([&] { record(trace::AddressReserve{{{}, *ptr, size}}); }, ptr, size,
                                                     alignment, addr, flags);
}

GMT_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  return recorded_before<DriverFn::MemAddressFree>([&] { record(trace::AddressFree{{{}, ptr, size}}); }, ptr, size);
}

// ---- what the program asked about free memory ----

GMT_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  return recorded_after<DriverFn::MemGetInfo>(
      [&] {
        if (free_bytes && total_bytes) record(trace::MemInfo{{}, current_device(), *free_bytes, *total_bytes});
      },
      free_bytes, total_bytes);
}

// ---- contexts: the device each is on, and what it cost ----

namespace {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML writes it; empty when the driver would not say.
std::string device_uuid(CUdevice device) {
  auto get = real<DriverFn::DeviceGetUuid>();
  CUuuid uuid{};
  if (!get || get(&uuid, device) != CUDA_SUCCESS) return {};
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[48];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

// Makes a context with `make` and records it, with the device's free memory (NVML's) before and after. A primary
// context that is active already costs nothing more and is not recorded.
template <typename Make>
CUresult context_made(bool primary, CUdevice device, Make&& make) {
  if (!tracing_active()) return make();
  if (primary) {
    auto state = real<DriverFn::DevicePrimaryCtxGetState>();
    unsigned flags = 0;
    int active = 0;
    if (state && state(device, &flags, &active) == CUDA_SUCCESS && active) return make();
  }
  std::string uuid = device_uuid(device);
  std::optional<nvml_states::DeviceMemory> before = nvml_states::device_memory(uuid);
  CUresult rc = make();
  if (rc != CUDA_SUCCESS) return rc;
  std::optional<nvml_states::DeviceMemory> after = before ? nvml_states::device_memory(uuid) : std::nullopt;
  trace::Context context{{}, device, primary ? 1u : 0u, uuid, 0, 0, 0};
  if (before && after) {
    context.free_before = before->free;
    context.free_after = after->free;
    context.total = after->total;
  }
  record(context);
  return rc;
}

}  // namespace

GMT_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  auto fn = real<DriverFn::DevicePrimaryCtxRetain>();
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  return context_made(true, dev, [&] { return fn(pctx, dev); });
}

GMT_EXPORT CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  auto fn = real<DriverFn::CtxCreate_v2>();
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  return context_made(false, dev, [&] { return fn(pctx, flags, dev); });
}

GMT_EXPORT CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev) {
  auto fn = real<DriverFn::CtxCreate_v4>();
  if (!fn) return CUDA_ERROR_NOT_INITIALIZED;
  return context_made(false, dev, [&] { return fn(pctx, params, flags, dev); });
}

// ---- arrays ----

GMT_EXPORT CUresult cuArrayCreate_v2(CUarray* handle, const CUDA_ARRAY_DESCRIPTOR* desc) {
  if (!desc) return recorded_after<DriverFn::ArrayCreate>([] {}, handle, desc);
  uint64_t bytes = array_bytes(*desc, 1);
  return allocation<DriverFn::ArrayCreate>(kCurrentDevice, bytes,
                                           [&] { return Made{as_u64(*handle), bytes}; }, handle, desc);
}

GMT_EXPORT CUresult cuArray3DCreate_v2(CUarray* handle, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  if (!desc) return recorded_after<DriverFn::Array3DCreate>([] {}, handle, desc);
  uint64_t bytes = array_bytes(*desc, desc->Depth);
  return allocation<DriverFn::Array3DCreate>(kCurrentDevice, bytes,
                                             [&] { return Made{as_u64(*handle), bytes}; }, handle, desc);
}

GMT_EXPORT CUresult cuArrayDestroy(CUarray handle) {
  return release<DriverFn::ArrayDestroy>(as_u64(handle), 0, handle);
}

// ---- the table ----

namespace gpumemtrace::interpose {

namespace {

struct Entry {
  const char* name;
  void* wrapper;  // nullptr: called by the tracer, not wrapped
  std::atomic<void*> real{nullptr};
};

// The exported name of each function: its identifier, but for the 11.3 lookup's asm label.
constexpr const char* exported_name(const char* identifier) {
  return std::string_view(identifier) == "gmt_cuGetProcAddress_v1" ? "cuGetProcAddress" : identifier;
}

Entry g_entries[] = {
#define GMT_DRIVER_WRAPPED(id, function) {exported_name(#function), reinterpret_cast<void*>(&function)},
#define GMT_DRIVER_MEMORY(id, function, api) GMT_DRIVER_WRAPPED(id, function)
#define GMT_DRIVER_CALLED(id, function) {#function, nullptr},
#include "interpose/hooks/driver_functions.def"
#undef GMT_DRIVER_WRAPPED
#undef GMT_DRIVER_MEMORY
#undef GMT_DRIVER_CALLED
};
static_assert(std::size(g_entries) == static_cast<size_t>(DriverFn::Count));

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
  auto get = real<DriverFn::CtxGetDevice>();
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
