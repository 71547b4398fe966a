#include "analyzer/replay/heaps.h"

#include <algorithm>
#include <iterator>

namespace gpumemtrace::replay {

namespace {
uint64_t sum(uint64_t a, uint64_t b) { return a + b; }
uint64_t max(uint64_t a, uint64_t b) { return std::max(a, b); }
}  // namespace

void HeapFigures::add(const HeapFigures& other) {
#define GPUMEMTRACE_FIGURE_ADD(member, json_key, combine) member = combine(member, other.member);
  GPUMEMTRACE_HEAP_FIGURES(GPUMEMTRACE_FIGURE_ADD)
#undef GPUMEMTRACE_FIGURE_ADD
}

HeapFigures Heap::figures() const {
  HeapFigures f;
  f.reserved_bytes = size;
  f.allocated_bytes = allocated_bytes;
  f.blocks = blocks.size() - pending_blocks;
  f.internal_bytes = internal_bytes;
  f.pending_bytes = pending_bytes;
  f.pending_requested_bytes = pending_requested_bytes;
  f.pending_blocks = pending_blocks;
  if (size == 0) return f;
  f.external_bytes = pending_bytes;
  // Walk the blocks in address order, clipped to the heap's memory; blocks may overlap (a sloppy report).
  const uint64_t end = base + size;
  uint64_t covered_to = base;
  auto gap = [&](uint64_t to) {
    if (to <= covered_to) return;
    f.external_bytes += to - covered_to;
    f.free_blocks += 1;
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

Heap* HeapTracker::find(uint64_t id) { return const_cast<Heap*>(std::as_const(*this).heap(id)); }

const Heap* HeapTracker::heap(uint64_t id) const {
  const size_t* place = index_.find(id);
  return place ? &heaps_[*place] : nullptr;
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

void HeapPlaces::add(Place place) {
  if (runs_.empty() || !(runs_.back().place == place)) runs_.push_back({size_, place});
  ++size_;
}

HeapPlaces::Place HeapPlaces::operator[](size_t index) const {
  auto after = std::upper_bound(runs_.begin(), runs_.end(), index, [](size_t i, const Run& run) { return i < run.first; });
  return std::prev(after)->place;
}

Heap& HeapTracker::add(uint64_t id, HeapPlaces::Place place) {
  index_.insert_or_assign(id, heaps_.size());  // a reused id names a new heap
  places_.add(place);
  Heap& heap = heaps_.emplace_back();
  heap.id = id;
  heap.device = place.device;
  heap.kind = place.kind;
  return heap;
}

Heap& HeapTracker::find_or_add(uint64_t id) {
  if (Heap* heap = find(id)) return *heap;
  ++inconsistencies_.unknown_heaps;
  return add(id, {});
}

void HeapTracker::on(const trace::HeapCreate& create, trace::MemoryKind kind) {
  if (create.heap == 0) return;
  Heap& heap = add(create.heap, {create.device, kind});
  if (for_reports_) heap.name = create.name;
  heap.base = create.address;
  heap.size = create.size;
  heap.created_ns = create.time_ns;
  if (create.size > 0 && for_reports_) heap.live_memory = live_memory_.emplace(create.address, create.address + create.size);
}

FoldedHeaps HeapTracker::folded(int32_t device) const {
  auto it = folded_.find(device);
  return it == folded_.end() ? FoldedHeaps{} : it->second;
}

void HeapTracker::fold_destroyed() {
  // Of each device's destroyed heaps, those past the first `destroyed_kept_` by (peak desc, creation) fold.
  // The scratch vectors stay with the tracker: a long history folds thousands of times.
  for (auto& [device, places] : fold_scratch_.destroyed) places.clear();
  for (size_t i = 0; i < heaps_.size(); ++i)
    if (heaps_[i].destroyed) fold_scratch_.destroyed[heaps_[i].device].push_back(i);
  std::vector<uint8_t>& folding = fold_scratch_.folding;
  folding.assign(heaps_.size(), 0);
  bool any = false;
  for (auto& [device, places] : fold_scratch_.destroyed) {
    if (places.size() <= destroyed_kept_) continue;
    auto kept_end = places.begin() + static_cast<ptrdiff_t>(destroyed_kept_);
    std::nth_element(places.begin(), kept_end, places.end(), [&](size_t a, size_t b) {
      if (heaps_[a].peak_allocated_bytes != heaps_[b].peak_allocated_bytes)
        return heaps_[a].peak_allocated_bytes > heaps_[b].peak_allocated_bytes;
      return a < b;
    });
    FoldedHeaps& folded = folded_[device];
    for (auto it = kept_end; it != places.end(); ++it) {
      const Heap& heap = heaps_[*it];
      folding[*it] = any = true;
      folded.heaps += 1;
      folded.reserved_bytes += heap.size;
      folded.peak_allocated_bytes = std::max(folded.peak_allocated_bytes, heap.peak_allocated_bytes);
    }
  }
  if (any) {
    // The index follows the heaps it names (the newest of an id): a folded one leaves it, a kept one moves.
    size_t kept = 0;
    for (size_t i = 0; i < heaps_.size(); ++i) {
      size_t* place = index_.find(heaps_[i].id);
      bool indexed = place && *place == i;
      if (folding[i]) {
        if (indexed) index_.erase(heaps_[i].id);
        continue;
      }
      if (indexed) *place = kept;
      if (kept != i) heaps_[kept] = std::move(heaps_[i]);
      ++kept;
    }
    heaps_.resize(kept);
  }
  destroyed_ = 0;
  for (const Heap& heap : heaps_) destroyed_ += heap.destroyed;
  fold_at_ = std::max<size_t>(kFoldAtLeast, 4 * destroyed_);
}

void HeapTracker::free_all(Heap& heap) {
  heap.blocks.clear();
  heap.allocated_bytes = 0;
  heap.internal_bytes = 0;
  heap.pending_bytes = 0;
  heap.pending_requested_bytes = 0;
  heap.pending_blocks = 0;
  track_allocated(heap);
}

void HeapTracker::track_allocated(Heap& heap) {
  if (for_reports_) heap.allocated_series.set(window_, heap.allocated_bytes);
}

void HeapTracker::halve(uint32_t window) {
  if (for_reports_)
    for (Heap& heap : heaps_) heap.allocated_series.halve(window);
}

void HeapTracker::on(const trace::HeapDestroy& destroy) {
  if (destroy.heap == 0) return;
  Heap& heap = find_or_add(destroy.heap);
  free_all(heap);
  if (heap.live_memory) {
    live_memory_.erase(*heap.live_memory);
    heap.live_memory.reset();
  }
  if (!heap.destroyed && ++destroyed_ >= fold_at_ && destroyed_kept_ != UINT64_MAX) {
    heap.destroyed = true;
    fold_destroyed();  // `heap` may be gone
    return;
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

// The block stops counting as allocated: it is freed, or only requested to be (then it counts as pending).
void HeapTracker::release(Heap& heap, HeapBlock& block) {
  heap.allocated_bytes -= block.size;
  heap.internal_bytes -= block.footprint() - block.size;
  track_allocated(heap);
}

void HeapTracker::remove(Heap& heap, std::map<uint64_t, HeapBlock>::iterator block) {
  if (block->second.free_requested) {
    heap.pending_bytes -= block->second.footprint();
    heap.pending_requested_bytes -= block->second.size;
    heap.pending_blocks -= 1;
  } else {
    release(heap, block->second);
  }
  heap.blocks.erase(block);
}

void HeapTracker::on(const trace::SubAlloc& alloc, uint32_t stack) {
  HeapBlock block{alloc.size, alloc.reserved, {}, false, stack};
  if (alloc.heap == 0) {
    loose_[alloc.address] = block;
    loose_blocks_ = loose_.size();
    return;
  }
  Heap& heap = find_or_add(alloc.heap);
  if (auto it = heap.blocks.find(alloc.address); it != heap.blocks.end()) remove(heap, it);  // replaced
  heap.blocks.emplace(alloc.address, block);
  heap.allocated_bytes += block.size;
  heap.internal_bytes += block.footprint() - block.size;
  track_allocated(heap);
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

void HeapTracker::on(const trace::SubFreeRequested& free) {
  auto [heap, block] = find_block(free.heap, free.address);
  if (!block || block->free_requested) {
    ++inconsistencies_.unknown_blocks;
    return;
  }
  block->free_requested = true;
  if (!heap) return;
  release(*heap, *block);
  heap->pending_bytes += block->footprint();
  heap->pending_requested_bytes += block->size;
  heap->pending_blocks += 1;
}

void HeapTracker::on(const trace::SubName& name) {
  HeapBlock* block = find_block(name.heap, name.address).second;
  if (!block) {
    ++inconsistencies_.unknown_blocks;
    return;
  }
  block->name = name.name;
}

std::pair<Heap*, HeapBlock*> HeapTracker::find_block(uint64_t heap_id, uint64_t address) {
  if (heap_id == 0) {
    auto it = loose_.find(address);
    return {nullptr, it == loose_.end() ? nullptr : &it->second};
  }
  Heap* heap = find(heap_id);
  if (!heap) return {nullptr, nullptr};
  auto it = heap->blocks.find(address);
  return {heap, it == heap->blocks.end() ? nullptr : &it->second};
}

const HeapBlock* HeapTracker::block(uint64_t heap, uint64_t address) const {
  return const_cast<HeapTracker*>(this)->find_block(heap, address).second;
}

HeapsAtFailure HeapTracker::at_failure(int32_t device) const {
  uint32_t heaps = 0, idle_heaps = 0;
  uint64_t idle_bytes = 0;
  HeapFigures sum;
  for (const Heap& heap : heaps_) {
    if (heap.destroyed || heap.size == 0) continue;
    if (heap.device != trace::kNoDevice && heap.device != device) continue;
    HeapFigures f = heap.figures();
    ++heaps;
    sum.add(f);
    if (heap.blocks.empty()) {
      ++idle_heaps;
      idle_bytes += f.reserved_bytes;
    }
  }
  return {heaps, sum.reserved_bytes, sum.allocated_bytes, sum.external_bytes, sum.free_blocks, sum.pending_bytes,
          sum.largest_free_bytes, idle_heaps, idle_bytes};
}

}  // namespace gpumemtrace::replay
