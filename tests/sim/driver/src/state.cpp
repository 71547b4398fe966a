#include "state.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim_config.h"

namespace gpumemtrace::sim {

Driver& driver() {
  static Driver* instance = new Driver;
  return *instance;
}

Device* device(CUdevice ordinal) {
  auto& devices = driver().devices;
  if (ordinal < 0 || ordinal >= static_cast<int>(devices.size())) return nullptr;
  return devices[ordinal].get();
}

Device* device_of_arena(uintptr_t p) {
  for (auto& dev : driver().devices)
    if (dev->in_arena(p)) return dev.get();
  return nullptr;
}

unsigned long long next_id() { return driver().next_id.fetch_add(1, std::memory_order_relaxed); }

namespace {

thread_local std::vector<CUctx_st*> tls_ctx_stack;

// GPUMEMTRACE_SIM_STATE_DIR: this process's file there, mapped, where every device's `used` is published.
uint64_t* map_state_file() {
  std::string dir = sim_state_dir();
  if (dir.empty()) return nullptr;
  std::string path = sim_state_file(dir, getpid());
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate(fd, kMaxSimDevices * sizeof(uint64_t)) != 0) {
    std::fprintf(stderr, "gpumemtrace simulated CUDA driver: cannot write %s; other processes will not see this one\n",
                 path.c_str());
    if (fd >= 0) close(fd);
    return nullptr;
  }
  void* mapped = mmap(nullptr, kMaxSimDevices * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return mapped == MAP_FAILED ? nullptr : static_cast<uint64_t*>(mapped);
}

CUmemPoolHandle_st* make_default_pool(Device& dev) {
  auto* pool = new CUmemPoolHandle_st(&dev, &dev.resource);
  pool->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pool->props.location = {CU_MEM_LOCATION_TYPE_DEVICE, dev.ordinal};
  pool->is_default = true;
  return pool;
}

CUresult do_init() {
  SimConfig config;
  if (!read_sim_config(&config, "CUDA driver", "cuInit fails with CUDA_ERROR_INVALID_VALUE"))
    return CUDA_ERROR_INVALID_VALUE;
  if (config.devices == 0) return CUDA_ERROR_NO_DEVICE;
  auto& devices = driver().devices;
  uint64_t* published = map_state_file();
  for (int i = 0; i < config.devices; i++) {
    auto dev = std::make_unique<Device>(i);
    dev->capacity = config.capacity;
    dev->others = config.others[static_cast<size_t>(i)];
    dev->context_bytes = config.context_bytes;
    if (published) dev->published_used = reinterpret_cast<std::atomic<uint64_t>*>(published + i);
    // Address space only (no memory is committed): 4x the capacity + 1 GiB, so that address space never runs out
    // before the accounting says out of memory.
    dev->arena_size = 4 * config.capacity + (1ull << 30);
    void* base = mmap(nullptr, dev->arena_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
    if (base == MAP_FAILED) {
      std::fprintf(stderr, "gpumemtrace simulated CUDA driver: cannot reserve %llu bytes of address space\n",
                   static_cast<unsigned long long>(dev->arena_size));
      devices.clear();
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    // mmap returns page-aligned addresses, more than the 512-byte alignment every block needs.
    dev->arena_base = reinterpret_cast<uintptr_t>(base);
    dev->arena.add_region(dev->arena_base, dev->arena_size);
    dev->primary.dev = dev.get();
    dev->primary.primary = true;
    dev->primary.id = next_id();
    dev->default_pool = dev->current_pool = make_default_pool(*dev);
    dev->pools.push_back(dev->default_pool);
    devices.push_back(std::move(dev));
  }
  return CUDA_SUCCESS;
}

}  // namespace

CUresult initialize() {
  Driver& d = driver();
  std::lock_guard lock(d.init_mu);
  if (!d.init_attempted) {
    d.init_attempted = true;
    d.init_result = do_init();
    if (d.init_result == CUDA_SUCCESS) d.initialized.store(true, std::memory_order_release);
  }
  return d.init_result;
}

CUctx_st* current_ctx() { return tls_ctx_stack.empty() ? nullptr : tls_ctx_stack.back(); }
std::vector<CUctx_st*>& ctx_stack() { return tls_ctx_stack; }

CUctx_st* stream_ctx(CUstream stream, CUresult* err) {
  CUctx_st* ctx;
  if (stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) {
    ctx = current_ctx();
    if (!ctx) *err = CUDA_ERROR_INVALID_CONTEXT;
    return ctx;
  }
  if (!valid(stream)) {
    *err = CUDA_ERROR_INVALID_HANDLE;
    return nullptr;
  }
  return stream->ctx;
}

CUresult check_stream(CUstream stream) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult err = CUDA_SUCCESS;
  return stream_ctx(stream, &err) ? CUDA_SUCCESS : err;
}

}  // namespace gpumemtrace::sim
