#include "analyzer/replay/heaps.h"

#include <algorithm>

namespace gpumemtrace::replay {

HeapFigures Heap::figures() const {
  HeapFigures f;
  f.reserved_bytes = size;
  f.allocated_bytes = allocated_bytes;
  f.blocks = blocks.size();
  f.internal_bytes = internal_bytes;
  if (size == 0) return f;
  // Walk the blocks in address order, clipped to the heap's memory; blocks may overlap (a sloppy report).
  const uint64_t end = base + size;
  uint64_t covered_to = base;
  auto gap = [&](uint64_t to) {
    if (to <= covered_to) return;
    f.external_bytes += to - covered_to;
    f.largest_free_bytes = std::max(f.largest_free_bytes, to - covered_to);
  };
  for (const auto& [address, block] : blocks) {
    if (address >= end) break;
    uint64_t block_end = address + block.footprint();
    if (block_end <= base) continue;
    gap(std::min(address, end));
    covered_to = std::max(covered_to, std::min(block_end, end));
  }
  gap(end);
  return f;
}

Heap* HeapTracker::find(uint64_t id) {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &heaps_[it->second];
}

const Heap* HeapTracker::heap(uint64_t id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &heaps_[it->second];
}

uint64_t HeapTracker::covered(uint64_t address, uint64_t size) const {
  uint64_t end = address + size, most = 0;
  // Disjoint ranges in address order end in address order too: walk back from the last that starts before end.
  for (auto it = live_memory_.lower_bound(end); it != live_memory_.begin();) {
    --it;
    if (it->second <= address) break;
    most = std::max(most, std::min(end, it->second) - std::max(address, it->first));
  }
  return most;
}

Heap& HeapTracker::find_or_add(uint64_t id) {
  if (Heap* heap = find(id)) return *heap;
  ++inconsistencies_.unknown_heaps;
  index_[id] = heaps_.size();
  Heap& heap = heaps_.emplace_back();
  heap.id = id;
  return heap;
}

void HeapTracker::on(const trace::HeapCreate& create, trace::MemoryKind kind) {
  if (create.heap == 0) return;
  index_[create.heap] = heaps_.size();  // a reused id names a new heap
  Heap& heap = heaps_.emplace_back();
  heap.id = create.heap;
  heap.name = create.name;
  heap.device = create.device;
  heap.base = create.address;
  heap.size = create.size;
  heap.kind = kind;
  heap.created_ns = create.time_ns;
  if (create.size > 0) live_memory_.emplace(create.address, create.address + create.size);
}

void HeapTracker::free_all(Heap& heap) {
  heap.blocks.clear();
  heap.allocated_bytes = 0;
  heap.internal_bytes = 0;
  heap.allocated_series.set(window_, 0);
}

void HeapTracker::halve(uint32_t window) {
  for (Heap& heap : heaps_) heap.allocated_series.halve(window);
}

void HeapTracker::on(const trace::HeapDestroy& destroy) {
  if (destroy.heap == 0) return;
  Heap& heap = find_or_add(destroy.heap);
  free_all(heap);
  if (!heap.destroyed && heap.size > 0) {
    auto [first, last] = live_memory_.equal_range(heap.base);
    auto it = std::find_if(first, last, [&](const auto& range) { return range.second == heap.base + heap.size; });
    if (it != last) live_memory_.erase(it);
  }
  heap.destroyed = true;
}

void HeapTracker::on(const trace::HeapReset& reset) {
  if (reset.heap == 0) {
    loose_.clear();
    loose_blocks_ = 0;
    return;
  }
  free_all(find_or_add(reset.heap));
}

void HeapTracker::remove(Heap& heap, std::map<uint64_t, HeapBlock>::iterator block) {
  heap.allocated_bytes -= block->second.size;
  heap.internal_bytes -= block->second.footprint() - block->second.size;
  heap.blocks.erase(block);
  heap.allocated_series.set(window_, heap.allocated_bytes);
}

void HeapTracker::on(const trace::SubAlloc& alloc) {
  if (alloc.heap == 0) {
    loose_[alloc.address] = HeapBlock{alloc.size, alloc.reserved, {}};
    loose_blocks_ = loose_.size();
    return;
  }
  Heap& heap = find_or_add(alloc.heap);
  if (auto it = heap.blocks.find(alloc.address); it != heap.blocks.end()) remove(heap, it);  // replaced
  HeapBlock block{alloc.size, alloc.reserved, {}};
  heap.blocks.emplace(alloc.address, block);
  heap.allocated_bytes += block.size;
  heap.internal_bytes += block.footprint() - block.size;
  heap.allocated_series.set(window_, heap.allocated_bytes);
  if (heap.allocated_bytes > heap.peak_allocated_bytes) {
    heap.peak_allocated_bytes = heap.allocated_bytes;
    heap.peak_ns = alloc.time_ns;
  }
}

void HeapTracker::on(const trace::SubFree& free) {
  if (free.heap == 0) {
    if (loose_.erase(free.address) == 0) ++inconsistencies_.unknown_blocks;
    loose_blocks_ = loose_.size();
    return;
  }
  Heap& heap = find_or_add(free.heap);
  auto it = heap.blocks.find(free.address);
  if (it == heap.blocks.end()) {
    ++inconsistencies_.unknown_blocks;
    return;
  }
  remove(heap, it);
}

void HeapTracker::on(const trace::SubName& name) {
  HeapBlock* block = nullptr;
  if (name.heap == 0) {
    auto it = loose_.find(name.address);
    if (it != loose_.end()) block = &it->second;
  } else if (Heap* heap = find(name.heap)) {
    auto it = heap->blocks.find(name.address);
    if (it != heap->blocks.end()) block = &it->second;
  }
  if (!block) {
    ++inconsistencies_.unknown_blocks;
    return;
  }
  block->name = name.name;
}

const HeapBlock* HeapTracker::block(uint64_t heap, uint64_t address) const {
  if (heap == 0) {
    auto it = loose_.find(address);
    return it == loose_.end() ? nullptr : &it->second;
  }
  auto index = index_.find(heap);
  if (index == index_.end()) return nullptr;
  const auto& blocks = heaps_[index->second].blocks;
  auto it = blocks.find(address);
  return it == blocks.end() ? nullptr : &it->second;
}

HeapsAtFailure HeapTracker::at_failure(int32_t device) const {
  HeapsAtFailure out;
  for (const Heap& heap : heaps_) {
    if (heap.destroyed || heap.size == 0) continue;
    if (heap.device != trace::kNoDevice && heap.device != device) continue;
    HeapFigures f = heap.figures();
    ++out.heaps;
    out.reserved_bytes += f.reserved_bytes;
    out.allocated_bytes += f.allocated_bytes;
    out.free_bytes += f.external_bytes;
    out.largest_free_bytes = std::max(out.largest_free_bytes, f.largest_free_bytes);
  }
  return out;
}

}  // namespace gpumemtrace::replay
