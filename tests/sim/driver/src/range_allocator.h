// Sub-allocator over address ranges that someone else reserved: the device arena (one region) and memory pools
// (one region per 2 MiB-rounded chunk). Exact-size LIFO free lists, so a freed block of the same size is handed out
// again first (deterministic address reuse); then bump allocation inside the regions; then splitting a larger free
// block; then coalescing adjacent free blocks. Metadata lives in std::pmr maps on a pool resource: after warm-up an
// allocation or a free makes neither a system call nor a malloc. Not thread-safe: the owner holds a lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory_resource>
#include <utility>
#include <vector>

namespace gpumemtrace::sim {

enum class BlockKind : uint8_t { Plain, Array, PoolChunk, PoolBlock };

struct Block {
  uint64_t size = 0;       // bytes the block occupies (a multiple of the allocator's alignment)
  uint64_t requested = 0;  // bytes the caller asked for
  uint64_t id = 0;         // process-wide buffer id (CU_POINTER_ATTRIBUTE_BUFFER_ID)
  uintptr_t region = 0;    // base address of the region holding the block
  uintptr_t next_free = 0; // free-list link (0 ends the list)
  void* owner = nullptr;   // the pool of a chunk or pool block, the array of an array block
  void* ctx = nullptr;     // the context current at allocation
  BlockKind kind = BlockKind::Plain;
  bool live = false;
};

class RangeAllocator {
 public:
  explicit RangeAllocator(std::pmr::memory_resource* resource)
      : blocks_(resource), free_heads_(resource), regions_(resource) {}
  RangeAllocator(const RangeAllocator&) = delete;
  RangeAllocator& operator=(const RangeAllocator&) = delete;

  void add_region(uintptr_t base, uint64_t size);
  // A live block of exactly `size` bytes (the caller rounds it), or {0, nullptr} when nothing fits.
  std::pair<uintptr_t, Block*> allocate(uint64_t size);
  // The block (live or free) whose range holds addr, or {0, nullptr}.
  std::pair<uintptr_t, Block*> find_containing(uintptr_t addr);
  // The live block starting exactly at addr, or nullptr.
  Block* find_live(uintptr_t addr);
  // Marks a live block free (it stays in its region for reuse).
  void release(uintptr_t addr, Block& block);

  bool region_in_use(uintptr_t base) const { return regions_.at(base).live != 0; }
  // Forgets regions without live blocks and every free block in them.
  void remove_regions(const std::vector<uintptr_t>& bases);
  // Region bases, highest address first.
  template <typename F>
  void for_each_region_descending(F&& f) const {
    for (auto it = regions_.rbegin(); it != regions_.rend(); ++it) f(it->first, it->second.size);
  }
  // Visits every live block (addr, block); f may not change the allocator.
  template <typename F>
  void for_each_live(F&& f) {
    for (auto& [addr, block] : blocks_)
      if (block.live) f(addr, block);
  }

 private:
  struct Region {
    uint64_t size = 0;
    uint64_t bump = 0;  // bytes handed out from the start of the region so far
    uint64_t live = 0;  // live blocks in the region
  };
  std::pair<uintptr_t, Block*> pop_free(uint64_t size);
  std::pair<uintptr_t, Block*> bump(uint64_t size);
  std::pair<uintptr_t, Block*> split_larger(uint64_t size);
  void push_free(uintptr_t addr, Block& block);
  void coalesce();
  void rebuild_free_lists();
  Block& mark_live(Block& block);

  std::pmr::map<uintptr_t, Block> blocks_;           // every block, live or free, by address
  std::pmr::map<uint64_t, uintptr_t> free_heads_;    // size -> first free block of that size
  std::pmr::map<uintptr_t, Region> regions_;          // by base address
};

}  // namespace gpumemtrace::sim
