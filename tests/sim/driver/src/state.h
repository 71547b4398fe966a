// The simulated device's state: configuration, devices with their accounting, handles (contexts, streams, events,
// pools, arrays) and the helpers every entry point uses. See tests/sim/README.md for the behaviour.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "cuda_api.h"
#include "range_allocator.h"
#include "sim_config.h"

namespace gpumemtrace::sim {

constexpr int kDriverVersion = kSimDriverVersion;
constexpr int kMaxDevices = kMaxSimDevices;
constexpr uint64_t kAllocAlign = 512;             // cuMemAlloc granularity and alignment
constexpr uint64_t kPoolChunk = 2ull << 20;        // a pool reserves device memory in multiples of this
constexpr uint64_t kVmmGranularity = 2ull << 20;   // cuMemGetAllocationGranularity, minimum and recommended
constexpr uint64_t kReleaseToOsBytes = 16ull << 20;  // freed arena blocks this large are madvise(DONTNEED)'d

// Saturates instead of wrapping, so a request near 2^64 stays too large to fit anywhere.
inline uint64_t round_up(uint64_t value, uint64_t align) {
  if (value > UINT64_MAX - (align - 1)) return UINT64_MAX / align * align;
  return (value + align - 1) / align * align;
}

struct Device;

// A mutex whose waiters spin briefly before sleeping (glibc's adaptive mutex): the device's critical
// sections are short, and many threads allocating at once should not turn every call into a context
// switch, which would dwarf what the simulated driver is standing in for.
class DeviceMutex {
 public:
  DeviceMutex() {
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&mutex_, &attributes);
    pthread_mutexattr_destroy(&attributes);
  }
  DeviceMutex(const DeviceMutex&) = delete;
  DeviceMutex& operator=(const DeviceMutex&) = delete;
  ~DeviceMutex() { pthread_mutex_destroy(&mutex_); }
  void lock() { pthread_mutex_lock(&mutex_); }
  void unlock() { pthread_mutex_unlock(&mutex_); }

 private:
  pthread_mutex_t mutex_;
};

// Every handle starts with a tag that is cleared when it is destroyed (handle memory is never returned to the heap,
// so a stale handle reads as invalid instead of crashing).
template <uint32_t Tag>
struct HandleTag {
  static constexpr uint32_t kMagic = Tag;
  std::atomic<uint32_t> magic{Tag};
};

}  // namespace gpumemtrace::sim

// The opaque handle types of cuda.h, defined here.
struct CUctx_st : gpumemtrace::sim::HandleTag<0x43545831> {  // "CTX1"
  gpumemtrace::sim::Device* dev = nullptr;
  unsigned int flags = 0;
  bool primary = false;
  unsigned long long id = 0;
};

struct CUstream_st : gpumemtrace::sim::HandleTag<0x53545231> {  // "STR1"
  CUctx_st* ctx = nullptr;
  unsigned int flags = 0;
  int priority = 0;
  unsigned long long id = 0;
};

struct CUevent_st : gpumemtrace::sim::HandleTag<0x45564e31> {  // "EVN1"
  CUctx_st* ctx = nullptr;
  unsigned int flags = 0;
  std::atomic<bool> recorded{false};
  std::atomic<int64_t> time_ns{0};
};

struct CUmemPoolHandle_st : gpumemtrace::sim::HandleTag<0x504f4f31> {  // "POO1"
  explicit CUmemPoolHandle_st(gpumemtrace::sim::Device* d, std::pmr::memory_resource* resource)
      : dev(d), blocks(resource) {}
  gpumemtrace::sim::Device* dev;
  // Everything below is guarded by dev->mu.
  gpumemtrace::sim::RangeAllocator blocks;  // regions = chunks reserved from the device
  CUmemPoolProps props{};
  uint64_t reserved = 0, reserved_high = 0, used = 0, used_high = 0;
  uint64_t release_threshold = 0;
  int reuse_follow_event_dependencies = 1, reuse_allow_opportunistic = 1, reuse_allow_internal_dependencies = 1;
  bool is_default = false;
  bool destroyed = false;  // destroyed while blocks were live: chunks go back as they empty
};

struct CUarray_st : gpumemtrace::sim::HandleTag<0x41525231> {  // "ARR1"
  gpumemtrace::sim::Device* dev = nullptr;
  CUDA_ARRAY3D_DESCRIPTOR desc{};
  CUdeviceptr base = 0;
  uint64_t bytes = 0;
  size_t element_size = 0;
};

namespace gpumemtrace::sim {

struct Device {
  explicit Device(int ordinal_) : ordinal(ordinal_) {}
  const int ordinal;
  uint64_t capacity = 0;
  uint64_t others = 0;   // held by "other processes"
  uint64_t context_bytes = 0;  // what each active context takes (GPUMEMTRACE_SIM_CONTEXT_MEMORY), counted in used
  uintptr_t arena_base = 0;
  uint64_t arena_size = 0;
  CUctx_st primary;      // the primary context's handle never changes

  DeviceMutex mu;        // guards everything below, and every pool of the device
  uint64_t used = 0;     // device memory held by this process (allocations, pool chunks, VMM handles)
  // `used`, published in this process's file of GPUMEMTRACE_SIM_STATE_DIR for the simulated NVML; or nullptr.
  std::atomic<uint64_t>* published_used = nullptr;
  std::pmr::unsynchronized_pool_resource resource;
  RangeAllocator arena{&resource};
  CUmemPoolHandle_st* default_pool = nullptr;
  CUmemPoolHandle_st* current_pool = nullptr;
  std::vector<CUmemPoolHandle_st*> pools;  // every pool not yet fully gone, default first
  int primary_refs = 0;
  unsigned int primary_flags = 0;

  uint64_t free_bytes() const { return capacity - others - used; }
  // Takes n bytes of device memory if they fit; callers hold mu.
  bool charge(uint64_t n) {
    if (n > free_bytes()) return false;
    used += n;
    publish();
    return true;
  }
  // Gives back n bytes; callers hold mu.
  void uncharge(uint64_t n) {
    used -= n;
    publish();
  }
  void publish() {
    if (published_used) published_used->store(used, std::memory_order_relaxed);
  }
  bool in_arena(uintptr_t p) const { return p - arena_base < arena_size; }
};

struct Driver {
  std::atomic<bool> initialized{false};
  std::mutex init_mu;
  bool init_attempted = false;
  CUresult init_result = CUDA_ERROR_NOT_INITIALIZED;
  std::vector<std::unique_ptr<Device>> devices;
  std::atomic<unsigned long long> next_id{1};
};

Driver& driver();  // never destroyed: other threads may still call in during exit
// cuInit: reads the configuration once, builds the devices; later calls return the first result.
CUresult initialize();

inline bool initialized() { return driver().initialized.load(std::memory_order_acquire); }
inline int device_count() { return static_cast<int>(driver().devices.size()); }
// The device of an ordinal, or nullptr.
Device* device(CUdevice ordinal);
// The device whose arena holds p, or nullptr.
Device* device_of_arena(uintptr_t p);
unsigned long long next_id();

// Every handle is made here. Handle memory is never returned to the heap (HandleTag), and each handle stays
// listed here, so that it is reachable for a leak checker (the asan preset's LeakSanitizer reported every
// destroyed array and context, and every stream a program had dropped).
template <typename T, typename... Args>
T* new_handle(Args&&... args) {
  static auto* made = new std::vector<T*>;  // never destroyed: handles outlive the static destructors
  static auto* made_mutex = new std::mutex;
  T* handle = new T(std::forward<Args>(args)...);
  std::lock_guard lock(*made_mutex);
  made->push_back(handle);
  return handle;
}

// Destroyed handles are kept for reuse rather than freed.
template <typename T>
class HandleCache {
 public:
  T* get() {
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        T* h = free_.back();
        free_.pop_back();
        h->~T();
        return new (h) T();
      }
    }
    return new_handle<T>();
  }
  void put(T* h) {
    h->magic.store(0, std::memory_order_relaxed);
    std::lock_guard lock(mu_);
    free_.push_back(h);
  }

 private:
  std::mutex mu_;
  std::vector<T*> free_;
};

// The calling thread's context stack (top = current).
CUctx_st* current_ctx();
std::vector<CUctx_st*>& ctx_stack();
// A live handle of its type.
template <typename T>
bool valid(const T* handle) {
  return handle && handle->magic.load(std::memory_order_relaxed) == T::kMagic;
}

// The context a stream handle stands for (NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD mean the current one),
// or nullptr with *err set.
CUctx_st* stream_ctx(CUstream stream, CUresult* err);
// CUDA_SUCCESS when work may be issued on the stream (initialized, valid handle, a context for default streams).
CUresult check_stream(CUstream stream);

// Device memory (dev.mu held): a block of the arena, charged to the device. CUDA_ERROR_OUT_OF_MEMORY if it does not
// fit. size must be > 0.
CUresult arena_alloc(Device& dev, uint64_t size, BlockKind kind, void* owner, CUctx_st* ctx, uintptr_t* out);
// Frees an arena block (dev.mu held).
void arena_free(Device& dev, uintptr_t addr, Block& block);

// Pools (dev.mu held).
CUresult pool_alloc(CUmemPoolHandle_st& pool, uint64_t size, CUctx_st* ctx, uintptr_t* out);
void pool_free(CUmemPoolHandle_st& pool, uintptr_t addr, Block& block);
void pool_trim(CUmemPoolHandle_st& pool, uint64_t keep);
// Synchronization point on a device: every pool gives back cached memory above its release threshold.
void release_pools_to_threshold(Device& dev);
// cuMemPoolDestroy: chunks go back now, or as their last block is freed.
CUresult destroy_pool(CUmemPoolHandle_st& pool);
// cuDevicePrimaryCtxReset.
CUresult reset_primary_context(Device& dev);

// Frees any device allocation (cuMemAlloc or pool block) or managed allocation starting at p.
CUresult free_device_pointer(uintptr_t p);

// What a pointer is, for pointer attributes, address ranges and memcpy checks.
struct PointerInfo {
  CUmemorytype type = static_cast<CUmemorytype>(0);  // 0: not a CUDA pointer
  uintptr_t base = 0;
  uint64_t size = 0;
  int device = -1;
  CUctx_st* ctx = nullptr;
  CUmemPoolHandle_st* pool = nullptr;
  uint64_t id = 0;
  bool managed = false;
  bool vmm = false;
  unsigned int host_flags = 0;
  void* host_pointer = nullptr;
};
bool lookup_pointer(uintptr_t p, PointerInfo* info, bool include_arrays = false);
// A range of memory that device operations may touch: [p, p+n) lies in one CUDA allocation (arrays included), or
// in adjacent VMM mappings.
bool device_range_ok(uintptr_t p, size_t n);
// A range that cuMemcpy (unified addressing) may touch: a CUDA allocation, or plain host memory.
bool unified_range_ok(uintptr_t p, size_t n);

// Host-side allocations (cuMemAllocManaged, cuMemHostAlloc, cuMemAllocHost, cuMemHostRegister).
enum class HostKind { Managed, Pinned, Registered };
CUresult host_alloc(size_t bytes, HostKind kind, unsigned int flags, int device, CUctx_st* ctx, void** out);
// Removes a host allocation of the given kind starting at p (munmap unless registered).
CUresult host_free(void* p, HostKind kind);
bool lookup_host(uintptr_t p, PointerInfo* info);
// VMM: a mapped address, and any address inside a cuMemAddressReserve range.
bool lookup_vmm(uintptr_t p, PointerInfo* info);
bool lookup_vmm_reservation(uintptr_t p);
// [p, p+n) lies in VMM mappings that follow one another without a gap (PyTorch's expandable segments copy across
// the pages of a segment).
bool vmm_range_mapped(uintptr_t p, size_t n);

// Entry-point prologues.
#define SIM_REQUIRE_INIT()                                          \
  do {                                                              \
    if (!::gpumemtrace::sim::initialized()) return CUDA_ERROR_NOT_INITIALIZED; \
  } while (0)

// The current context or CUDA_ERROR_INVALID_CONTEXT.
#define SIM_REQUIRE_CTX(var)                                         \
  SIM_REQUIRE_INIT();                                                \
  CUctx_st* var = ::gpumemtrace::sim::current_ctx();                 \
  if (!var) return CUDA_ERROR_INVALID_CONTEXT

}  // namespace gpumemtrace::sim
