// Device memory accounting: the arena (cuMemAlloc, arrays, pool chunks), pools, and pointer lookups.
#include <sys/mman.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "state.h"

namespace gpumemtrace::sim {

CUresult arena_alloc(Device& dev, uint64_t size, BlockKind kind, void* owner, CUctx_st* ctx, uintptr_t* out) {
  uint64_t rounded = round_up(size, kAllocAlign);
  if (!dev.charge(rounded)) return CUDA_ERROR_OUT_OF_MEMORY;
  auto [addr, block] = dev.arena.allocate(rounded);
  if (!block) {  // address space exhausted (fragmentation): report it as out of memory
    dev.uncharge(rounded);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  block->requested = size;
  block->kind = kind;
  block->owner = owner;
  block->ctx = ctx;
  block->id = next_id();
  *out = addr;
  return CUDA_SUCCESS;
}

void arena_free(Device& dev, uintptr_t addr, Block& block) {
  dev.uncharge(block.size);
  // Large blocks give their pages back (the address range stays reserved); small ones keep them for reuse.
  if (block.size >= kReleaseToOsBytes) madvise(reinterpret_cast<void*>(addr), block.size, MADV_DONTNEED);
  dev.arena.release(addr, block);
}

namespace {

// Gives back chunks of a pool to its device (dev.mu held; the chunks have no live block).
void release_chunks(CUmemPoolHandle_st& pool, const std::vector<std::pair<uintptr_t, uint64_t>>& chunks) {
  Device& dev = *pool.dev;
  std::vector<uintptr_t> bases;
  for (auto [base, size] : chunks) {
    bases.push_back(base);
    pool.reserved -= size;
    arena_free(dev, base, *dev.arena.find_live(base));
  }
  pool.blocks.remove_regions(bases);
}

void forget_pool_if_gone(CUmemPoolHandle_st& pool) {
  if (!pool.destroyed || pool.reserved != 0) return;
  std::erase(pool.dev->pools, &pool);
  // The handle stays allocated (marked dead) so a stale copy reads as invalid.
  pool.magic.store(0, std::memory_order_relaxed);
}

}  // namespace

void pool_trim(CUmemPoolHandle_st& pool, uint64_t keep) {
  if (pool.reserved <= keep) return;
  std::vector<std::pair<uintptr_t, uint64_t>> unused;
  uint64_t reserved = pool.reserved;
  pool.blocks.for_each_region_descending([&](uintptr_t base, uint64_t size) {
    if (reserved > keep && !pool.blocks.region_in_use(base)) {
      unused.emplace_back(base, size);
      reserved -= size;
    }
  });
  release_chunks(pool, unused);
}

CUresult pool_alloc(CUmemPoolHandle_st& pool, uint64_t size, CUctx_st* ctx, uintptr_t* out) {
  Device& dev = *pool.dev;
  uint64_t rounded = round_up(size, kAllocAlign);
  auto [addr, block] = pool.blocks.allocate(rounded);
  if (!block) {
    uint64_t chunk = round_up(rounded, kPoolChunk);
    bool fits_pool = pool.props.maxSize == 0 || pool.reserved + chunk <= pool.props.maxSize;
    if (!fits_pool || chunk > dev.free_bytes()) {
      pool_trim(pool, 0);  // give back this pool's unused cached chunks, then try once more
      fits_pool = pool.props.maxSize == 0 || pool.reserved + chunk <= pool.props.maxSize;
      if (!fits_pool) return CUDA_ERROR_OUT_OF_MEMORY;
    }
    uintptr_t base;
    if (CUresult r = arena_alloc(dev, chunk, BlockKind::PoolChunk, &pool, nullptr, &base); r != CUDA_SUCCESS) return r;
    pool.blocks.add_region(base, chunk);
    pool.reserved += chunk;
    pool.reserved_high = std::max(pool.reserved_high, pool.reserved);
    std::tie(addr, block) = pool.blocks.allocate(rounded);
  }
  block->requested = size;
  block->kind = BlockKind::PoolBlock;
  block->owner = &pool;
  block->ctx = ctx;
  block->id = next_id();
  pool.used += size;
  pool.used_high = std::max(pool.used_high, pool.used);
  *out = addr;
  return CUDA_SUCCESS;
}

void pool_free(CUmemPoolHandle_st& pool, uintptr_t addr, Block& block) {
  pool.used -= block.requested;
  pool.blocks.release(addr, block);
  if (pool.destroyed) {
    pool_trim(pool, 0);
    forget_pool_if_gone(pool);
  }
}

void release_pools_to_threshold(Device& dev) {
  std::lock_guard lock(dev.mu);
  for (CUmemPoolHandle_st* pool : dev.pools)
    if (pool->reserved > pool->release_threshold) pool_trim(*pool, pool->release_threshold);
}

CUresult destroy_pool(CUmemPoolHandle_st& pool) {
  Device& dev = *pool.dev;
  std::lock_guard lock(dev.mu);
  if (pool.is_default) return CUDA_ERROR_INVALID_VALUE;
  pool.destroyed = true;
  if (dev.current_pool == &pool) dev.current_pool = dev.default_pool;
  pool_trim(pool, 0);
  forget_pool_if_gone(pool);
  return CUDA_SUCCESS;
}

namespace {

// The pool block holding p inside a chunk, or nullptr.
std::pair<uintptr_t, Block*> pool_block_containing(const Block& chunk, uintptr_t p) {
  auto* pool = static_cast<CUmemPoolHandle_st*>(chunk.owner);
  return pool->blocks.find_containing(p);
}

}  // namespace

CUresult free_device_pointer(uintptr_t p) {
  if (Device* dev = device_of_arena(p)) {
    std::lock_guard lock(dev->mu);
    auto [addr, block] = dev->arena.find_containing(p);
    if (!block || !block->live) return CUDA_ERROR_INVALID_VALUE;
    if (block->kind == BlockKind::PoolChunk) {
      auto [paddr, pblock] = pool_block_containing(*block, p);
      if (!pblock || !pblock->live || paddr != p) return CUDA_ERROR_INVALID_VALUE;
      pool_free(*static_cast<CUmemPoolHandle_st*>(pblock->owner), paddr, *pblock);
      return CUDA_SUCCESS;
    }
    if (addr != p || block->kind != BlockKind::Plain) return CUDA_ERROR_INVALID_VALUE;
    arena_free(*dev, addr, *block);
    return CUDA_SUCCESS;
  }
  return host_free(reinterpret_cast<void*>(p), HostKind::Managed);
}

// cuDevicePrimaryCtxReset: every allocation made in the device's primary context is freed (cuMemAlloc, arrays,
// pool blocks), pools are trimmed, and the context becomes inactive.
CUresult reset_primary_context(Device& dev) {
  std::lock_guard lock(dev.mu);
  std::vector<std::pair<uintptr_t, Block*>> plain;
  std::vector<std::pair<CUmemPoolHandle_st*, std::pair<uintptr_t, Block*>>> pooled;
  dev.arena.for_each_live([&](uintptr_t addr, Block& block) {
    if (block.ctx == &dev.primary && block.kind != BlockKind::PoolChunk) plain.emplace_back(addr, &block);
  });
  for (CUmemPoolHandle_st* pool : dev.pools)
    pool->blocks.for_each_live([&](uintptr_t addr, Block& block) {
      if (block.ctx == &dev.primary) pooled.emplace_back(pool, std::make_pair(addr, &block));
    });
  for (auto& [addr, block] : plain) {
    if (block->kind == BlockKind::Array) static_cast<CUarray_st*>(block->owner)->magic.store(0);
    arena_free(dev, addr, *block);
  }
  for (auto& [pool, entry] : pooled) {
    pool->used -= entry.second->requested;
    pool->blocks.release(entry.first, *entry.second);
  }
  for (CUmemPoolHandle_st* pool : std::vector<CUmemPoolHandle_st*>(dev.pools)) {
    pool_trim(*pool, 0);
    forget_pool_if_gone(*pool);
  }
  if (dev.primary_refs > 0) dev.uncharge(dev.context_bytes);
  dev.primary_refs = 0;
  dev.primary_flags = 0;
  dev.primary.flags = 0;
  return CUDA_SUCCESS;
}

bool lookup_pointer(uintptr_t p, PointerInfo* info, bool include_arrays) {
  if (Device* dev = device_of_arena(p)) {
    std::lock_guard lock(dev->mu);
    auto [addr, block] = dev->arena.find_containing(p);
    if (!block || !block->live) return false;
    if (block->kind == BlockKind::PoolChunk) {
      std::tie(addr, block) = pool_block_containing(*block, p);
      if (!block || !block->live) return false;
      info->pool = static_cast<CUmemPoolHandle_st*>(block->owner);
    }
    info->type = CU_MEMORYTYPE_DEVICE;
    info->base = addr;
    info->size = block->requested;
    info->device = dev->ordinal;
    info->ctx = static_cast<CUctx_st*>(block->ctx);
    info->id = block->id;
    // An array's memory is not a pointer for the API (only the simulator's own array copies address it).
    if (block->kind == BlockKind::Array && !include_arrays) return false;
    return p - addr < block->requested;
  }
  return lookup_vmm(p, info) || lookup_host(p, info);
}

bool device_range_ok(uintptr_t p, size_t n) {
  PointerInfo info;
  if (!lookup_pointer(p, &info, true)) return false;
  return info.vmm ? vmm_range_mapped(p, n) : n <= info.base + info.size - p;
}

bool unified_range_ok(uintptr_t p, size_t n) {
  if (p == 0 || n > UINTPTR_MAX - p) return false;
  PointerInfo info;
  if (lookup_pointer(p, &info)) return info.vmm ? vmm_range_mapped(p, n) : n <= info.base + info.size - p;
  // Not CUDA memory: plain host memory, unless it falls in address space the simulator manages.
  return !device_of_arena(p) && !lookup_vmm_reservation(p);
}

}  // namespace gpumemtrace::sim
