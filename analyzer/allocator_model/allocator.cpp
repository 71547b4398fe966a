#include "analyzer/allocator_model/allocator.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <memory>

namespace gpumemtrace::allocator_model {

SegmentPlacement simulated_device_placement() {
  struct State {
    std::map<uint64_t, std::vector<uint64_t>> freed;  // by size, last freed last
    uint64_t top = uint64_t{1} << 40;
  };
  auto state = std::make_shared<State>();
  return {[state](uint64_t size) {
            auto it = state->freed.find(size);
            if (it != state->freed.end() && !it->second.empty()) {
              uint64_t address = it->second.back();
              it->second.pop_back();
              return address;
            }
            uint64_t address = state->top;
            state->top += size;
            return address;
          },
          [state](uint64_t address, uint64_t size) { state->freed[size].push_back(address); }};
}

bool Allocator::ByAddress::operator()(BlockId a, BlockId b) const {
  const Block& x = (*blocks)[a];
  const Block& y = (*blocks)[b];
  return std::tie(x.stream, x.address) < std::tie(y.stream, y.address);
}

Allocator::Allocator(Settings settings, SegmentPlacement placement)
    : settings_(settings), placement_(std::move(placement)) {
  for (Pool* pool : {&small_, &large_}) {
    pool->unmapped = std::set<BlockId, ByAddress>(ByAddress{&blocks_});
  }
  small_.small = true;
}

BlockId Allocator::new_block(Block block) {
  if (!unused_ids_.empty()) {
    BlockId id = unused_ids_.back();
    unused_ids_.pop_back();
    blocks_[id] = block;
    return id;
  }
  blocks_.push_back(block);
  return static_cast<BlockId>(blocks_.size() - 1);
}

void Allocator::delete_block(BlockId id) {
  blocks_[id].live = false;
  unused_ids_.push_back(id);
}

void Allocator::note(SegmentEvent::Kind kind, uint64_t address, uint64_t size, uint64_t stream) {
  events_.push_back({kind, address, size, stream, counters_.requests});
}

void Allocator::grow_reserved(uint64_t bytes) {
  counters_.reserved += bytes;
  counters_.peak_reserved = std::max(counters_.peak_reserved, counters_.reserved);
}

bool Allocator::gc_on() const {
  return settings_.per_process_memory_fraction && settings_.garbage_collection_threshold > 0;
}

void Allocator::cache(BlockId id) {
  Pool& pool = pool_of(blocks_[id].small);
  blocks_[id].gc_base = pool.get_free_block_calls;
  pool.blocks.insert(pool_key(id));
  if (releasable(id)) pool.releasable.insert(pool_key(id));
}

// What release_blocks does something with: a whole segment, or an expandable segment's block holding a whole
// page (unmap_block unmaps nothing of one that does not).
bool Allocator::releasable(BlockId id) const {
  const Block& block = blocks_[id];
  if (block.expandable < 0) return !block.split();
  const Expandable& segment = expandables_[static_cast<size_t>(block.expandable)];
  uint64_t offset = block.address - segment.base;
  return (offset + segment.page - 1) / segment.page < (offset + block.size) / segment.page;
}

void Allocator::uncache(Pool& pool, BlockId id) {
  pool.blocks.erase(pool_key(id));
  pool.releasable.erase(pool_key(id));
}

bool Allocator::allocatable(BlockId id) const {
  return id != kNone && !blocks_[id].allocated && !blocks_[id].pending;
}

std::optional<BlockId> Allocator::find_free_block(const Pool& pool, uint64_t size, uint64_t stream) const {
  auto it = pool.blocks.lower_bound(PoolKey::at_least(stream, size));
  auto on_stream = [&](auto at) { return at != pool.blocks.end() && at->stream == stream; };
  if (!on_stream(it)) return std::nullopt;
  if (blocks_[it->id].expandable >= 0 && settings_.expandable_segments) {
    // An expandable block counts for best fit as the size it could grow to over the unmapped range after it.
    auto could_grow_to = [this](BlockId id) {
      const Block& b = blocks_[id];
      return b.size + (b.next != kNone && !blocks_[b.next].mapped ? blocks_[b.next].size : 0);
    };
    auto next = std::next(it);
    while (blocks_[it->id].expandable >= 0 && on_stream(next) && could_grow_to(next->id) < could_grow_to(it->id))
      it = next++;
  }
  const Block& found = blocks_[it->id];
  // An oversize block is not handed to a request below max_split_size, nor to a much smaller oversize one.
  if (size < settings_.max_split_size && found.size >= settings_.max_split_size) return std::nullopt;
  if (size >= settings_.max_split_size && found.size >= size + settings_.max_non_split_rounding_size)
    return std::nullopt;
  return it->id;
}

bool Allocator::should_split(const Block& block, uint64_t size) const {
  uint64_t remaining = block.size - size;
  if (block.small || settings_.expandable_segments) return remaining >= kMinBlockSize;
  return size < settings_.max_split_size && remaining > kSmallSize;
}

// The found block (out of its pool) becomes the allocation; its remainder, when split off, goes back to the pool.
BlockId Allocator::take_found_block(BlockId id, uint64_t size) {
  BlockId taken = id;
  if (should_split(blocks_[id], size)) {
    Block front = blocks_[id];
    front.size = size;
    front.next = id;
    taken = new_block(front);
    Block& rest = blocks_[id];
    if (rest.prev != kNone) blocks_[rest.prev].next = taken;
    rest.prev = taken;
    rest.address += size;
    rest.size -= size;
    cache(id);
  }
  Block& block = blocks_[taken];
  block.allocated = true;
  counters_.allocated += block.size;
  counters_.peak_allocated = std::max(counters_.peak_allocated, counters_.allocated);
  return taken;
}

std::optional<BlockId> Allocator::malloc(uint64_t requested, uint64_t stream) {
  uint64_t size = round_size(settings_, requested);
  Pool& pool = pool_of(small_pool(size));
  uint64_t segment = segment_size(settings_, size);
  if (gc_on()) ++pool.get_free_block_calls;  // the blocks' age
  std::optional<BlockId> found = find_free_block(pool, size, stream);
  if (found) {
    uncache(pool, *found);
  } else {
    if (gc_on()) garbage_collect();
    found = alloc_block(pool, size, stream, segment, false);
    if (!found && release_available_cached_blocks(pool, size, stream))
      found = alloc_block(pool, size, stream, segment, false);
    if (!found) {
      release_cached_blocks();
      found = alloc_block(pool, size, stream, segment, true);
    }
  }
  uint64_t request = counters_.requests++;
  if (!found) {
    counters_.out_of_memory.push_back(request);
    return std::nullopt;
  }
  return take_found_block(*found, size);
}

bool Allocator::device_fits(uint64_t bytes) const {
  uint64_t available = settings_.device_memory > settings_.other_memory
                           ? settings_.device_memory - settings_.other_memory
                           : 0;
  return counters_.reserved <= available && bytes <= available - counters_.reserved;
}

// A new block for the request: a segment from cudaMalloc, or pages mapped into the expandable segment. Refused
// without asking the device when the memory fraction would be exceeded (by the whole segment size, even when
// expandable segments map less).
std::optional<BlockId> Allocator::alloc_block(Pool& pool, uint64_t size, uint64_t stream, uint64_t segment,
                                              bool retry) {
  if (retry) ++counters_.alloc_retries;
  if (std::optional<uint64_t> allowed = settings_.allowed_maximum();
      allowed && counters_.reserved + segment > *allowed)
    return std::nullopt;
  if (settings_.expandable_segments) return try_allocate_expandable(pool, size, stream);
  if (!device_fits(segment)) return std::nullopt;
  Block block;
  block.address = placement_.place(segment);
  block.size = segment;
  block.stream = stream;
  block.small = pool.small;
  grow_reserved(segment);
  ++counters_.device_allocs;
  note(SegmentEvent::Kind::Alloc, block.address, segment, stream);
  return new_block(block);
}

void Allocator::release_block(BlockId id) {
  Block& block = blocks_[id];
  assert(block.expandable < 0 && !block.split());
  uncache(pool_of(block.small), id);
  note(SegmentEvent::Kind::Free, block.address, block.size, block.stream);
  placement_.release(block.address, block.size);
  counters_.reserved -= block.size;
  ++counters_.device_frees;
  delete_block(id);
}

// With max_split_size set: release the smallest cached oversize block of the stream that is at least as large as
// the request (and max_split_size); failing that, the largest ones, down to max_split_size, until as many bytes
// are released. Expandable blocks are never released here (2.14.1; older versions did not check).
bool Allocator::release_available_cached_blocks(Pool& pool, uint64_t size, uint64_t stream) {
  if (settings_.max_split_size == kUnlimited) return false;
  uint64_t target = std::max(size, settings_.max_split_size);
  std::vector<BlockId> on_stream;  // the stream's cached blocks, by size
  for (const PoolKey& block : pool.blocks)
    if (block.stream == stream && blocks_[block.id].expandable < 0) on_stream.push_back(block.id);
  auto first = std::find_if(on_stream.begin(), on_stream.end(), [&](BlockId id) { return blocks_[id].size >= target; });
  if (first != on_stream.end()) {
    release_block(*first);
    return true;
  }
  uint64_t released = 0;
  for (auto it = on_stream.rbegin(); it != on_stream.rend() && released < target; ++it) {
    if (blocks_[*it].size < settings_.max_split_size) break;
    released += blocks_[*it].size;
    release_block(*it);
  }
  return released >= target;
}

void Allocator::synchronize_pending() {
  std::vector<BlockId> pending;
  pending.swap(pending_);
  for (BlockId id : pending)
    if (blocks_[id].live && blocks_[id].pending) {
      blocks_[id].pending = false;
      free_block(id);
    }
}

void Allocator::release_blocks(Pool& pool) {
  std::vector<BlockId> to_unmap;
  for (auto it = pool.releasable.begin(); it != pool.releasable.end();) {
    BlockId id = (it++)->id;
    if (blocks_[id].expandable >= 0)
      to_unmap.push_back(id);
    else if (!blocks_[id].split())
      release_block(id);
  }
  for (BlockId id : to_unmap) {
    unmap_block(id);
    if (blocks_[id].live && !blocks_[id].split() && !blocks_[id].mapped) release_expandable(id);
  }
}

// The events of blocks freed later are waited for, then every cached block that is a whole segment goes back to
// the device (large pool first), and the free pages of expandable segments are unmapped.
void Allocator::release_cached_blocks() {
  synchronize_pending();
  release_blocks(large_);
  release_blocks(small_);
}

void Allocator::empty_cache() { release_cached_blocks(); }

// Garbage collection (a memory fraction and garbage_collection_threshold set), before asking for a new segment:
// when reserved is over threshold x allowed, cached large-pool blocks that are whole segments (not expandable)
// and at least as old as their average age are released, pass after pass, until the excess is reclaimed. A
// block's age is the number of large-pool searches since it was cached.
void Allocator::garbage_collect() {
  uint64_t threshold = static_cast<uint64_t>(settings_.garbage_collection_threshold *
                                             static_cast<double>(*settings_.allowed_maximum()));
  if (counters_.reserved <= threshold) return;
  uint64_t target = counters_.reserved - threshold;
  auto age = [this](BlockId id) { return large_.get_free_block_calls - blocks_[id].gc_base; };
  auto freeable = [this](BlockId id) { return !blocks_[id].split() && blocks_[id].expandable < 0; };
  uint64_t total_age = 0;
  int64_t count = 0;
  for (const PoolKey& block : large_.blocks)
    if (freeable(block.id)) {
      total_age += age(block.id);
      ++count;
    }
  uint64_t reclaimed = 0;
  bool freed = true;
  while (reclaimed < target && freed && count > 0) {
    double threshold_age = static_cast<double>(total_age) / static_cast<double>(count);
    freed = false;
    for (auto it = large_.blocks.begin(); it != large_.blocks.end();) {
      BlockId id = (it++)->id;
      if (freeable(id) && static_cast<double>(age(id)) >= threshold_age) {
        freed = true;
        reclaimed += blocks_[id].size;
        total_age -= age(id);
        --count;
        release_block(id);
      }
    }
  }
}

uint64_t Allocator::try_merge(BlockId dst, BlockId src, Pool& pool) {
  if (src == kNone || blocks_[src].allocated || blocks_[src].pending || blocks_[src].mapped != blocks_[dst].mapped)
    return 0;
  Block& s = blocks_[src];
  Block& d = blocks_[dst];
  if (s.mapped)
    uncache(pool, src);
  else
    pool.unmapped.erase(src);
  if (d.prev == src) {
    d.address = s.address;
    d.prev = s.prev;
    if (d.prev != kNone) blocks_[d.prev].next = dst;
  } else {
    d.next = s.next;
    if (d.next != kNone) blocks_[d.next].prev = dst;
  }
  d.size += s.size;
  uint64_t subsumed = s.size;
  delete_block(src);
  return subsumed;
}

// A block goes back to its pool, merged with the free neighbours of its segment.
void Allocator::free_block(BlockId id) {
  Pool& pool = pool_of(blocks_[id].small);
  try_merge(id, blocks_[id].prev, pool);
  try_merge(id, blocks_[id].next, pool);
  cache(id);
}

void Allocator::free(BlockId id) {
  Block& block = blocks_[id];
  assert(block.live && block.allocated);
  block.allocated = false;
  counters_.allocated -= block.size;
  free_block(id);
}

void Allocator::free_later(BlockId id) {
  Block& block = blocks_[id];
  assert(block.live && block.allocated);
  block.allocated = false;
  block.pending = true;
  counters_.allocated -= block.size;
  pending_.push_back(id);
}

void Allocator::complete(BlockId id) {
  if (!blocks_[id].live || !blocks_[id].pending) return;  // a synchronization freed it already
  blocks_[id].pending = false;
  std::erase(pending_, id);
  free_block(id);
}

// A pool is ordered by (stream, size): each stream's largest block is the last of its range, one step per stream.
uint64_t Allocator::largest_free_block() const {
  uint64_t largest = 0;
  for (const Pool* pool : {&small_, &large_}) {
    for (auto end = pool->blocks.end(); end != pool->blocks.begin();) {
      const PoolKey& last = *std::prev(end);
      largest = std::max(largest, last.size);
      end = pool->blocks.lower_bound(PoolKey::at_least(last.stream, 0));
    }
  }
  return largest;
}

bool Allocator::malloc_would_release(uint64_t requested, uint64_t stream) const {
  uint64_t size = round_size(settings_, requested);
  const Pool& pool = pool_of(small_pool(size));
  if (find_free_block(pool, size, stream)) return false;
  std::optional<uint64_t> allowed = settings_.allowed_maximum();
  if (gc_on() && counters_.reserved > static_cast<uint64_t>(settings_.garbage_collection_threshold *
                                                            static_cast<double>(*allowed))) {
    for (const PoolKey& block : large_.blocks)
      if (!blocks_[block.id].split() && blocks_[block.id].expandable < 0) return true;
  }
  uint64_t segment = segment_size(settings_, size);
  if (allowed && counters_.reserved + segment > *allowed) return true;
  // With expandable segments fewer bytes may be mapped than a segment; at most the request, to the page.
  uint64_t page = small_pool(size) ? kSmallBuffer : settings_.large_segment_size;
  uint64_t needed = settings_.expandable_segments ? (size + page - 1) / page * page : segment;
  return !device_fits(needed);
}

// ---- Expandable segments: one address range per stream and pool, mapped page by page (2 MiB pages in the small
// pool, large_segment_size in the large), reserved for 1 1/8 of the device's memory.

BlockId Allocator::find_expandable_block(Pool& pool, uint64_t size, uint64_t stream) {
  auto room_from = [&](BlockId id) {
    uint64_t bytes = 0;
    while (bytes < size && allocatable(id)) {
      bytes += blocks_[id].size;
      id = blocks_[id].next;
    }
    return bytes >= size;
  };
  for (BlockId id : pool.unmapped) {
    if (blocks_[id].stream != stream) continue;
    BlockId candidate = allocatable(blocks_[id].prev) ? blocks_[id].prev : id;
    if (room_from(candidate)) return candidate;
  }
  Expandable segment;
  segment.page = pool.small ? kSmallBuffer : settings_.large_segment_size;
  uint64_t memory = settings_.device_memory == kUnlimited ? uint64_t{1} << 40 : settings_.device_memory;
  uint64_t space = memory + memory / 8;
  segment.pages = (space + segment.page - 1) / segment.page;
  segment.base = next_reserve_;
  segment.stream = stream;
  segment.small = pool.small;
  next_reserve_ += segment.pages * segment.page;
  expandables_.push_back(segment);
  Block block;
  block.address = segment.base;
  block.size = segment.pages * segment.page;
  block.stream = stream;
  block.small = pool.small;
  block.mapped = false;
  block.expandable = static_cast<int32_t>(expandables_.size() - 1);
  BlockId id = new_block(block);
  pool.unmapped.insert(id);
  return id;
}

// Maps the pages under the first `size` bytes of an unmapped block; the rest stays unmapped after it.
bool Allocator::map_block(BlockId id, uint64_t size) {
  const Expandable& segment = expandables_[static_cast<size_t>(blocks_[id].expandable)];
  uint64_t offset = blocks_[id].address - segment.base;
  uint64_t first = offset / segment.page;
  uint64_t end = (offset + size + segment.page - 1) / segment.page;
  uint64_t mapped = (end - first) * segment.page;
  if (mapped == 0) return true;
  if (!device_fits(mapped)) return false;
  Pool& pool = pool_of(blocks_[id].small);
  pool.unmapped.erase(id);
  blocks_[id].mapped = true;
  if (mapped < blocks_[id].size) {
    Block rest = blocks_[id];
    rest.address += mapped;
    rest.size -= mapped;
    rest.mapped = false;
    rest.prev = id;
    BlockId rest_id = new_block(rest);
    if (blocks_[rest_id].next != kNone) blocks_[blocks_[rest_id].next].prev = rest_id;
    blocks_[id].next = rest_id;
    blocks_[id].size = mapped;
    pool.unmapped.insert(rest_id);
  }
  uint64_t address = segment.base + first * segment.page;
  uint64_t stream = blocks_[id].stream;
  try_merge(id, blocks_[id].prev, pool);
  try_merge(id, blocks_[id].next, pool);
  cache(id);
  grow_reserved(mapped);
  ++counters_.device_allocs;
  note(SegmentEvent::Kind::Map, address, mapped, stream);
  return true;
}

std::optional<BlockId> Allocator::try_allocate_expandable(Pool& pool, uint64_t size, uint64_t stream) {
  BlockId candidate = find_expandable_block(pool, size, stream);
  if (!blocks_[candidate].mapped && !map_block(candidate, std::min(blocks_[candidate].size, size)))
    return std::nullopt;
  while (blocks_[candidate].size < size) {
    BlockId next = blocks_[candidate].next;
    uint64_t remaining = size - blocks_[candidate].size;
    if (!map_block(next, std::min(remaining, blocks_[next].size))) return std::nullopt;
    candidate = next;  // merged with the mapped block before it
  }
  uncache(pool, candidate);
  return candidate;
}

// Unmaps the whole pages inside a cached expandable block; what is left of it on either side stays cached.
void Allocator::cache_piece(BlockId id, uint64_t address, uint64_t size, bool before) {
  Block piece = blocks_[id];
  piece.address = address;
  piece.size = size;
  (before ? piece.next : piece.prev) = id;
  BlockId piece_id = new_block(piece);
  BlockId outer = before ? blocks_[piece_id].prev : blocks_[piece_id].next;
  if (outer != kNone) (before ? blocks_[outer].next : blocks_[outer].prev) = piece_id;
  (before ? blocks_[id].prev : blocks_[id].next) = piece_id;
  cache(piece_id);
}

void Allocator::unmap_block(BlockId id) {
  const Expandable& segment = expandables_[static_cast<size_t>(blocks_[id].expandable)];
  Block& block = blocks_[id];
  uint64_t offset = block.address - segment.base;
  uint64_t first = (offset + segment.page - 1) / segment.page;
  uint64_t end = (offset + block.size) / segment.page;
  if (first >= end) return;
  Pool& pool = pool_of(block.small);
  uncache(pool, id);
  uint64_t begin_address = segment.base + first * segment.page;
  uint64_t bytes = (end - first) * segment.page;
  uint64_t before = begin_address - block.address;
  uint64_t after = block.size - before - bytes;
  if (before > 0) cache_piece(id, block.address, before, true);
  if (after > 0) cache_piece(id, begin_address + bytes, after, false);
  blocks_[id].address = begin_address;
  blocks_[id].size = bytes;
  blocks_[id].mapped = false;
  try_merge(id, blocks_[id].prev, pool);
  try_merge(id, blocks_[id].next, pool);
  pool.unmapped.insert(id);
  counters_.reserved -= bytes;
  ++counters_.device_frees;
  note(SegmentEvent::Kind::Unmap, begin_address, bytes, blocks_[id].stream);
}

// A segment unmapped from end to end gives its address space back.
void Allocator::release_expandable(BlockId id) {
  pool_of(blocks_[id].small).unmapped.erase(id);
  delete_block(id);
}

}  // namespace gpumemtrace::allocator_model
