// Hooks on the shared CUDA runtime's allocation APIs. They only name the API the application called:
// the driver wrappers underneath record the event under that name (HookState). If the driver chain did
// not see the call (a runtime whose driver pointers we could not swap), the hook records it itself, so
// each logical allocation is in the trace exactly once. Programs with a static runtime never come here;
// the driver chain sees them.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <unordered_set>

#include "interpose/hooks/bypass_checks.h"
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

GMT_EXPORT cudaError_t cudaMallocAsync_ptsz(void** ptr, size_t size, cudaStream_t stream);
GMT_EXPORT cudaError_t cudaFreeAsync_ptsz(void* ptr, cudaStream_t stream);
GMT_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream);

namespace {

template <typename Fn>
Fn next_function(const char* name) {
  return reinterpret_cast<Fn>(real_dlsym(RTLD_NEXT, name));
}

// The runtime call in progress on this thread. A runtime call made inside another (a runtime that calls
// its own exported functions) belongs to the outer one and is not noted again.
class RuntimeScope {
 public:
  RuntimeScope(Api api, uint64_t size, uint64_t address) : state_(hook_state()), saved_(state_) {
    state_.runtime_api = api;
    state_.runtime_size = size;
    state_.runtime_address = address;
    state_.recorded = false;
    state_.mapped_low = state_.mapped_high = 0;
    ++state_.runtime_depth;
  }
  ~RuntimeScope() { state_ = saved_; }
  bool recorded() const { return state_.recorded; }
  // The driver chain mapped `address` with cuMemMap during this call.
  bool mapped(uint64_t address) const { return address >= state_.mapped_low && address < state_.mapped_high; }
  void mark_recorded() { state_.recorded = true; }

 private:
  HookState& state_;
  HookState saved_;
};

// Runtime allocations another preloaded library served with the VMM API (cuMemCreate, cuMemMap): the
// trace has their memory already, as the physical memory and mapping the driver chain recorded, so neither
// the allocation nor its free is recorded again under the runtime's name.
class VmmServedAllocations {
 public:
  void add(uint64_t address) {
    std::lock_guard lock(mutex_);
    if (!logged_) {
      logged_ = true;
      debug_log("cudaMalloc at 0x%llx is served by another library with cuMemCreate/cuMemMap: recorded as VMM memory",
                static_cast<unsigned long long>(address));
    }
    addresses_.insert(address);
    count_.store(addresses_.size(), std::memory_order_relaxed);
  }
  // True (and forgotten) if `address` is one of them. One relaxed load when there are none.
  bool take(uint64_t address) {
    if (count_.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard lock(mutex_);
    bool found = addresses_.erase(address) > 0;
    count_.store(addresses_.size(), std::memory_order_relaxed);
    return found;
  }

 private:
  std::mutex mutex_;
  std::unordered_set<uint64_t> addresses_;
  std::atomic<size_t> count_{0};
  bool logged_ = false;
};

VmmServedAllocations& vmm_served() {
  static auto* allocations = new VmmServedAllocations;  // never destroyed: hooks run until the process ends
  return *allocations;
}

// Calls an allocating runtime function; records it here only if the driver chain did not.
// `result` reads the address and size out of the out-parameters after success.
template <typename Call, typename Result>
cudaError_t allocate(Api api, uint64_t requested, int device, Call&& call, Result&& result, uint64_t stream = 0,
                     uint64_t pool = 0) {
  if (!tracing_active() || hook_state().runtime_depth > 0) return call();
  RuntimeScope scope(api, requested, 0);
  cudaError_t rc = call();
  if (!scope.recorded()) {
    if (device == kCurrentDevice) device = current_device();
    if (rc == cudaSuccess) {
      auto [address, size] = result();
      if (scope.mapped(address)) {
        vmm_served().add(address);
        return rc;
      }
      if (address && size) on_runtime_allocation_unseen_by_driver();
      record(trace::Alloc{{}, api, device, address, size, 0, stream, pool});
      torch::on_allocation();
    } else {
      record(trace::AllocFailed{{}, api, device, requested, 0, static_cast<uint64_t>(rc), 0, 0});
      if (rc == cudaErrorMemoryAllocation) {
        nvml_states::on_out_of_memory();
        sync_trace();
      }
    }
  }
  return rc;
}

template <typename Call>
cudaError_t release(Api api, const void* ptr, Call&& call, uint64_t stream = 0) {
  if (!tracing_active() || !ptr || hook_state().runtime_depth > 0 || vmm_served().take(as_u64(ptr))) return call();
  RuntimeScope scope(api, 0, as_u64(ptr));
  record(trace::Free{{}, api, as_u64(ptr), stream});
  scope.mark_recorded();
  cudaError_t rc = call();
  if (rc != cudaSuccess) record(trace::FreeFailed{{}, api, as_u64(ptr), static_cast<uint64_t>(rc)});
  return rc;
}


struct Allocation {
  uint64_t address;
  uint64_t size;
};

size_t channel_bytes(const cudaChannelFormatDesc* desc) {
  if (!desc) return 1;
  int bits = desc->x + desc->y + desc->z + desc->w;
  return bits > 0 ? static_cast<size_t>((bits + 7) / 8) : 1;
}

}  // namespace

#define GMT_REAL(name) static const auto real = next_function<decltype(&name)>(#name); \
  if (!real) return cudaErrorInitializationError

GMT_EXPORT cudaError_t cudaMalloc(void** ptr, size_t size) {
  GMT_REAL(cudaMalloc);
  return allocate(Api::cudaMalloc, size, kCurrentDevice, [&] { return real(ptr, size); },
                  [&] { return Allocation{as_u64(*ptr), size}; });
}

GMT_EXPORT cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  GMT_REAL(cudaMallocPitch);
  return allocate(Api::cudaMallocPitch, 0, kCurrentDevice, [&] { return real(ptr, pitch, width, height); },
                  [&] { return Allocation{as_u64(*ptr), *pitch * height}; });
}

GMT_EXPORT cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent) {
  GMT_REAL(cudaMalloc3D);
  return allocate(Api::cudaMalloc3D, 0, kCurrentDevice, [&] { return real(pitched, extent); }, [&] {
    return Allocation{as_u64(pitched->ptr), pitched->pitch * extent.height * (extent.depth ? extent.depth : 1)};
  });
}

GMT_EXPORT cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int flags) {
  GMT_REAL(cudaMallocManaged);
  return allocate(Api::cudaMallocManaged, size, kCurrentDevice, [&] { return real(ptr, size, flags); },
                  [&] { return Allocation{as_u64(*ptr), size}; });
}

GMT_EXPORT cudaError_t cudaMallocHost(void** ptr, size_t size) {
  GMT_REAL(cudaMallocHost);
  return allocate(Api::cudaMallocHost, size, kHost, [&] { return real(ptr, size); },
                  [&] { return Allocation{as_u64(*ptr), size}; });
}

GMT_EXPORT cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int flags) {
  GMT_REAL(cudaHostAlloc);
  return allocate(Api::cudaHostAlloc, size, kHost, [&] { return real(ptr, size, flags); },
                  [&] { return Allocation{as_u64(*ptr), size}; });
}

GMT_EXPORT cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream) {
  GMT_REAL(cudaMallocAsync);
  return allocate(Api::cudaMallocAsync, size, kCurrentDevice, [&] { return real(ptr, size, stream); },
                  [&] { return Allocation{as_u64(*ptr), size}; }, as_u64(stream));
}

cudaError_t cudaMallocAsync_ptsz(void** ptr, size_t size, cudaStream_t stream) {
  GMT_REAL(cudaMallocAsync_ptsz);
  return allocate(Api::cudaMallocAsync, size, kCurrentDevice, [&] { return real(ptr, size, stream); },
                  [&] { return Allocation{as_u64(*ptr), size}; }, as_u64(stream));
}

GMT_EXPORT cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
  GMT_REAL(cudaMallocFromPoolAsync);
  return allocate(Api::cudaMallocFromPoolAsync, size, kCurrentDevice, [&] { return real(ptr, size, pool, stream); },
                  [&] { return Allocation{as_u64(*ptr), size}; }, as_u64(stream), as_u64(pool));
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
  GMT_REAL(cudaMallocFromPoolAsync_ptsz);
  return allocate(Api::cudaMallocFromPoolAsync, size, kCurrentDevice, [&] { return real(ptr, size, pool, stream); },
                  [&] { return Allocation{as_u64(*ptr), size}; }, as_u64(stream), as_u64(pool));
}

GMT_EXPORT cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width,
                                       size_t height, unsigned int flags) {
  GMT_REAL(cudaMallocArray);
  return allocate(Api::cudaMallocArray, 0, kCurrentDevice, [&] { return real(array, desc, width, height, flags); },
                  [&] {
                    return Allocation{as_u64(*array), channel_bytes(desc) * width * (height ? height : 1)};
                  });
}

GMT_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                                         unsigned int flags) {
  GMT_REAL(cudaMalloc3DArray);
  return allocate(Api::cudaMalloc3DArray, 0, kCurrentDevice, [&] { return real(array, desc, extent, flags); },
                  [&] {
                    size_t cells = extent.width * (extent.height ? extent.height : 1) * (extent.depth ? extent.depth : 1);
                    return Allocation{as_u64(*array), channel_bytes(desc) * cells};
                  });
}

GMT_EXPORT cudaError_t cudaFree(void* ptr) {
  GMT_REAL(cudaFree);
  return release(Api::cudaFree, ptr, [&] { return real(ptr); });
}

GMT_EXPORT cudaError_t cudaFreeHost(void* ptr) {
  GMT_REAL(cudaFreeHost);
  return release(Api::cudaFreeHost, ptr, [&] { return real(ptr); });
}

GMT_EXPORT cudaError_t cudaFreeArray(cudaArray_t array) {
  GMT_REAL(cudaFreeArray);
  return release(Api::cudaFreeArray, array, [&] { return real(array); });
}

GMT_EXPORT cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  GMT_REAL(cudaFreeAsync);
  return release(Api::cudaFreeAsync, ptr, [&] { return real(ptr, stream); }, as_u64(stream));
}

cudaError_t cudaFreeAsync_ptsz(void* ptr, cudaStream_t stream) {
  GMT_REAL(cudaFreeAsync_ptsz);
  return release(Api::cudaFreeAsync, ptr, [&] { return real(ptr, stream); }, as_u64(stream));
}
