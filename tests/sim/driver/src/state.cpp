#include "state.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "common/size_units.h"

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

struct Config {
  int devices = 1;
  uint64_t capacity = 16ull << 30;
  std::vector<uint64_t> others;  // one per device
};

bool config_error(const char* var, const char* value, const char* what) {
  std::fprintf(stderr, "gpumemtrace simulated CUDA driver: %s='%s' %s; cuInit fails with CUDA_ERROR_INVALID_VALUE\n",
               var, value, what);
  return false;
}

std::optional<uint64_t> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 4) return std::nullopt;
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

constexpr uint64_t kMaxCapacity = 1ull << 40;

bool read_config(Config* config) {
  if (const char* v = std::getenv("GPUMEMTRACE_SIM_DEVICES"); v && *v) {
    auto n = parse_count(v);
    if (!n || *n > kMaxDevices) return config_error("GPUMEMTRACE_SIM_DEVICES", v, "is not a device count from 0 to 16");
    config->devices = static_cast<int>(*n);
  }
  if (const char* v = std::getenv("GPUMEMTRACE_SIM_MEMORY"); v && *v) {
    auto bytes = parse_size(v);
    if (!bytes || *bytes < kPoolChunk || *bytes > kMaxCapacity)
      return config_error("GPUMEMTRACE_SIM_MEMORY", v, "is not a memory size from 2MiB to 1TiB (e.g. 16GiB)");
    config->capacity = *bytes;
  }
  config->others.assign(config->devices, 0);
  if (const char* v = std::getenv("GPUMEMTRACE_SIM_OTHERS_MEMORY"); v && *v) {
    std::string_view text(v);
    std::vector<uint64_t> sizes;
    while (true) {
      size_t comma = text.find(',');
      auto bytes = parse_size(text.substr(0, comma));
      if (!bytes)
        return config_error("GPUMEMTRACE_SIM_OTHERS_MEMORY", v,
                            "is not a size or a comma-separated list of sizes (e.g. 1GiB or 0,512MiB)");
      sizes.push_back(*bytes);
      if (comma == std::string_view::npos) break;
      text.remove_prefix(comma + 1);
    }
    if (sizes.size() == 1) sizes.assign(config->devices, sizes[0]);
    if (static_cast<int>(sizes.size()) != config->devices)
      return config_error("GPUMEMTRACE_SIM_OTHERS_MEMORY", v, "does not list one size per device");
    for (uint64_t s : sizes)
      if (s > config->capacity)
        return config_error("GPUMEMTRACE_SIM_OTHERS_MEMORY", v, "exceeds the device memory (GPUMEMTRACE_SIM_MEMORY)");
    config->others = sizes;
  }
  return true;
}

CUmemPoolHandle_st* make_default_pool(Device& dev) {
  auto* pool = new CUmemPoolHandle_st(&dev, &dev.resource);
  pool->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pool->props.location = {CU_MEM_LOCATION_TYPE_DEVICE, dev.ordinal};
  pool->is_default = true;
  return pool;
}

CUresult do_init() {
  Config config;
  if (!read_config(&config)) return CUDA_ERROR_INVALID_VALUE;
  if (config.devices == 0) return CUDA_ERROR_NO_DEVICE;
  auto& devices = driver().devices;
  for (int i = 0; i < config.devices; i++) {
    auto dev = std::make_unique<Device>(i);
    dev->capacity = config.capacity;
    dev->others = config.others[i];
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
