// Host-side CUDA memory: managed (cuMemAllocManaged), pinned (cuMemHostAlloc, cuMemAllocHost) and registered
// (cuMemHostRegister). None of it counts against a device's capacity. With unified addressing the device pointer of
// such memory is its host address.
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "state.h"

namespace gpumemtrace::sim {
namespace {

struct HostBlock {
  uint64_t size;
  uint64_t mapped;  // bytes mmap'ed (0 for registered memory)
  HostKind kind;
  unsigned int flags;
  int device;
  CUctx_st* ctx;
  uint64_t id;
};

struct HostRegistry {
  std::mutex mu;
  std::map<uintptr_t, HostBlock> blocks;
};

HostRegistry& registry() {
  static auto* r = new HostRegistry;
  return *r;
}

uint64_t page_size() {
  static const uint64_t size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// The block holding p (mu held), or end().
std::map<uintptr_t, HostBlock>::iterator containing(HostRegistry& r, uintptr_t p) {
  auto it = r.blocks.upper_bound(p);
  if (it == r.blocks.begin()) return r.blocks.end();
  --it;
  return p - it->first < it->second.size ? it : r.blocks.end();
}

}  // namespace

CUresult host_alloc(size_t bytes, HostKind kind, unsigned int flags, int device, CUctx_st* ctx, void** out) {
  HostRegistry& r = registry();
  uintptr_t addr;
  uint64_t mapped = 0;
  if (kind == HostKind::Registered) {
    addr = reinterpret_cast<uintptr_t>(*out);
    std::lock_guard lock(r.mu);
    auto after = r.blocks.lower_bound(addr);
    if ((after != r.blocks.end() && after->first < addr + bytes) || containing(r, addr) != r.blocks.end())
      return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    r.blocks[addr] = HostBlock{bytes, 0, kind, flags, device, ctx, next_id()};
    return CUDA_SUCCESS;
  }
  mapped = round_up(bytes, page_size());
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  addr = reinterpret_cast<uintptr_t>(p);
  {
    std::lock_guard lock(r.mu);
    r.blocks[addr] = HostBlock{bytes, mapped, kind, flags, device, ctx, next_id()};
  }
  *out = p;
  return CUDA_SUCCESS;
}

CUresult host_free(void* p, HostKind kind) {
  HostRegistry& r = registry();
  uint64_t mapped;
  {
    std::lock_guard lock(r.mu);
    auto it = r.blocks.find(reinterpret_cast<uintptr_t>(p));
    if (it == r.blocks.end() || it->second.kind != kind)
      return kind == HostKind::Registered ? CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED : CUDA_ERROR_INVALID_VALUE;
    mapped = it->second.mapped;
    r.blocks.erase(it);
  }
  if (mapped) munmap(p, mapped);
  return CUDA_SUCCESS;
}

bool lookup_host(uintptr_t p, PointerInfo* info) {
  HostRegistry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = containing(r, p);
  if (it == r.blocks.end()) return false;
  const HostBlock& b = it->second;
  info->type = b.kind == HostKind::Managed ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  info->managed = b.kind == HostKind::Managed;
  info->base = it->first;
  info->size = b.size;
  info->device = b.device;
  info->ctx = b.ctx;
  info->id = b.id;
  info->host_flags = b.flags;
  info->host_pointer = reinterpret_cast<void*>(p);
  return true;
}

}  // namespace gpumemtrace::sim
