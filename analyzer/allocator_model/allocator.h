// A model of PyTorch's CUDA caching allocator on one device (DeviceCachingAllocator in
// c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.14.1), written from the rules its source states:
//
// - requests are rounded (settings.h); those of 1 MiB or less go to the small pool, the others to the large;
//   each pool is ordered by (stream, size, address) and a block is only reused on the stream it was made on;
// - best fit: the first block of the request's stream at least as large, unless it is oversize (>= max_split_size)
//   for a request below max_split_size, or more than max_non_split_rounding_size larger than an oversize request;
// - a found block is split when the remainder is at least 512 B in the small pool or with expandable segments,
//   else only when the request is below max_split_size and the remainder is over 1 MiB;
// - on a miss: garbage collection (with a memory fraction and a threshold), a new segment (cudaMalloc, or pages
//   mapped into the stream's expandable segment), then releasing cached oversize blocks (with max_split_size set)
//   and trying again, then releasing every cached block that is a whole segment and trying again, then out of
//   memory;
// - a freed block merges with its free neighbours; a block used on other streams (record_stream) is freed only
//   when their events complete (free_later, then complete), or when the allocator synchronizes (a retry, or
//   empty_cache);
// - empty_cache releases every cached whole segment and unmaps the free pages of expandable segments.
//
// Not modelled: CUDA graph pools and MemPools (use_mem_pool, its OOM fallback), the free-memory callbacks,
// IPC, switching expandable segments on or off during the run, other devices.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "analyzer/allocator_model/settings.h"

namespace gpumemtrace::allocator_model {

// What the allocator asks of the device, in the order it asks.
struct SegmentEvent {
  enum class Kind : uint8_t { Alloc, Free, Map, Unmap };  // cudaMalloc, cudaFree, pages mapped, pages unmapped
  Kind kind = Kind::Alloc;
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t stream = 0;
  uint64_t request = 0;  // the malloc (counted from 0) during which it happened; for the others, the next one's

  bool operator==(const SegmentEvent&) const = default;
};

struct Counters {
  uint64_t reserved = 0;       // bytes in segments and mapped pages (memory_reserved)
  uint64_t allocated = 0;      // bytes in blocks handed out, rounded and with unsplit slack (memory_allocated)
  uint64_t peak_reserved = 0;
  uint64_t peak_allocated = 0;
  uint64_t device_allocs = 0;  // cudaMalloc calls that succeeded and mappings (num_device_alloc)
  uint64_t device_frees = 0;   // cudaFree calls and unmappings (num_device_free)
  uint64_t alloc_retries = 0;  // mallocs that released every cached segment and tried again (num_alloc_retries)
  uint64_t requests = 0;       // mallocs asked for
  std::vector<uint64_t> out_of_memory;  // the mallocs (counted from 0) that failed
};

using BlockId = uint32_t;

// Where a new segment lands on the device: cudaMalloc's address for `size` bytes, and the address given back.
// Addresses only order blocks of the same stream and size; the default places as the simulated device does
// (a freed address of the same size again, last freed first; else new addresses above all others).
struct SegmentPlacement {
  std::function<uint64_t(uint64_t size)> place;
  std::function<void(uint64_t address, uint64_t size)> release;
};
SegmentPlacement simulated_device_placement();

class Allocator {
 public:
  explicit Allocator(Settings settings, SegmentPlacement placement = simulated_device_placement());
  Allocator(const Allocator&) = delete;  // its pools point into its blocks
  Allocator& operator=(const Allocator&) = delete;

  // A tensor's request of `size` bytes on `stream`: its block, or nullopt when it does not fit (out of memory,
  // counted in Counters::out_of_memory).
  std::optional<BlockId> malloc(uint64_t size, uint64_t stream);
  // The program frees the block: now, or (free_later) once the other streams it was used on are done with it.
  void free(BlockId block);
  void free_later(BlockId block);
  // The events of a block freed with free_later completed: it is freed, unless a synchronization already did it.
  void complete(BlockId block);
  void empty_cache();

  // Whether a malloc of `size` on `stream` would release cached segments or pages first (garbage collection or a
  // failed attempt): false when a cached block fits or the new segment fits in the device and the fraction.
  bool malloc_would_release(uint64_t size, uint64_t stream) const;

  uint64_t address(BlockId block) const { return blocks_[block].address; }
  uint64_t size(BlockId block) const { return blocks_[block].size; }
  const Settings& settings() const { return settings_; }
  const Counters& counters() const { return counters_; }
  const std::vector<SegmentEvent>& events() const { return events_; }
  // The largest cached free block (mapped), 0 when none.
  uint64_t largest_free_block() const;

 private:
  struct Expandable {
    uint64_t base = 0;
    uint64_t page = 0;
    uint64_t pages = 0;  // of address space
    uint64_t stream = 0;
    bool small = false;
  };
  struct Block {
    uint64_t address = 0;
    uint64_t size = 0;
    uint64_t stream = 0;
    BlockId prev = kNone, next = kNone;
    uint64_t gc_base = 0;   // the pool's get_free_block count when the block was cached
    int32_t expandable = -1;  // index in expandables_
    bool small = false;
    bool allocated = false;
    bool pending = false;  // freed by the program, waiting for other streams
    bool mapped = true;
    bool live = true;
    bool split() const { return prev != kNone || next != kNone; }
  };
  static constexpr BlockId kNone = UINT32_MAX;
  // A cached block as a pool orders it: by stream, size, then address (best fit, lowest address first). The key
  // is held in the set, not looked up through the block: a search compares a few dozen keys, and the what-if
  // replays many histories of millions of requests.
  struct PoolKey {
    uint64_t stream = 0, size = 0, address = 0;
    BlockId id = kNone;
    auto operator<=>(const PoolKey&) const = default;
    // Where a search for `size` bytes on `stream` begins: before every block of that stream and size.
    static PoolKey at_least(uint64_t stream, uint64_t size) { return {stream, size, 0, 0}; }
  };
  struct ByAddress {
    const std::vector<Block>* blocks;
    bool operator()(BlockId a, BlockId b) const;
  };
  struct Pool {
    std::set<PoolKey> blocks;                // cached, mapped
    // Of those, the ones an empty_cache gives back (release_blocks): whole segments, and the blocks of
    // expandable segments that hold a whole page. A cached block never changes between the two (only a block
    // taken out of the pool is split or resized), so they are kept apart: a history that frees each segment as soon as its blocks, an
    // empty_cache per request, would otherwise walk every cached piece each time (quadratic in the history).
    std::set<PoolKey> releasable;
    std::set<BlockId, ByAddress> unmapped;   // expandable segments' unmapped ranges
    uint64_t get_free_block_calls = 0;       // counted only while garbage collection is on: blocks' age
    bool small = false;
  };

  BlockId new_block(Block block);
  void delete_block(BlockId id);
  Pool& pool_of(bool small) { return small ? small_ : large_; }
  const Pool& pool_of(bool small) const { return small ? small_ : large_; }
  PoolKey pool_key(BlockId id) const {
    const Block& block = blocks_[id];
    return {block.stream, block.size, block.address, id};
  }
  void cache(BlockId id);  // insert_into_blocks
  void uncache(Pool& pool, BlockId id);  // out of pool.blocks (and pool.releasable)
  bool releasable(BlockId id) const;
  bool gc_on() const;
  std::optional<BlockId> find_free_block(const Pool& pool, uint64_t size, uint64_t stream) const;
  bool should_split(const Block& block, uint64_t size) const;
  BlockId take_found_block(BlockId block, uint64_t size);
  void free_block(BlockId id);
  uint64_t try_merge(BlockId dst, BlockId src, Pool& pool);
  void garbage_collect();
  std::optional<BlockId> alloc_block(Pool& pool, uint64_t size, uint64_t stream, uint64_t segment, bool retry);
  bool device_fits(uint64_t bytes) const;
  bool release_available_cached_blocks(Pool& pool, uint64_t size, uint64_t stream);
  void release_cached_blocks();
  void release_blocks(Pool& pool);
  void release_block(BlockId id);
  void synchronize_pending();
  // Expandable segments.
  std::optional<BlockId> try_allocate_expandable(Pool& pool, uint64_t size, uint64_t stream);
  BlockId find_expandable_block(Pool& pool, uint64_t size, uint64_t stream);
  bool map_block(BlockId id, uint64_t size);
  void unmap_block(BlockId id);
  // A cached piece of `size` bytes at `address` split off block `id`: the part before it, or after it.
  void cache_piece(BlockId id, uint64_t address, uint64_t size, bool before);
  void release_expandable(BlockId id);
  bool allocatable(BlockId id) const;
  void note(SegmentEvent::Kind kind, uint64_t address, uint64_t size, uint64_t stream);
  void grow_reserved(uint64_t bytes);

  Settings settings_;
  SegmentPlacement placement_;
  std::vector<Block> blocks_;
  std::vector<BlockId> unused_ids_;
  std::vector<Expandable> expandables_;
  std::vector<BlockId> pending_;  // freed later, in the order they were freed
  Pool small_, large_;
  Counters counters_;
  std::vector<SegmentEvent> events_;
  uint64_t next_reserve_ = uint64_t{1} << 56;  // expandable segments' address space
};

}  // namespace gpumemtrace::allocator_model
