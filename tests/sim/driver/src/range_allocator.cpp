#include "range_allocator.h"

#include <iterator>

namespace gpumemtrace::sim {

void RangeAllocator::add_region(uintptr_t base, uint64_t size) { regions_[base] = Region{size, 0, 0}; }

Block& RangeAllocator::mark_live(Block& block) {
  block.live = true;
  block.next_free = 0;
  regions_.at(block.region).live++;
  return block;
}

std::pair<uintptr_t, Block*> RangeAllocator::allocate(uint64_t size) {
  if (auto hit = pop_free(size); hit.second) return hit;
  if (auto hit = bump(size); hit.second) return hit;
  if (auto hit = split_larger(size); hit.second) return hit;
  coalesce();
  if (auto hit = bump(size); hit.second) return hit;
  return split_larger(size);
}

std::pair<uintptr_t, Block*> RangeAllocator::pop_free(uint64_t size) {
  auto head = free_heads_.find(size);
  if (head == free_heads_.end()) return {0, nullptr};
  uintptr_t addr = head->second;
  Block& block = blocks_.at(addr);
  if (block.next_free)
    head->second = block.next_free;
  else
    free_heads_.erase(head);
  return {addr, &mark_live(block)};
}

std::pair<uintptr_t, Block*> RangeAllocator::bump(uint64_t size) {
  for (auto& [base, region] : regions_) {
    if (region.size - region.bump < size) continue;
    uintptr_t addr = base + region.bump;
    region.bump += size;
    Block& block = blocks_.emplace(addr, Block{}).first->second;
    block.size = size;
    block.region = base;
    return {addr, &mark_live(block)};
  }
  return {0, nullptr};
}

std::pair<uintptr_t, Block*> RangeAllocator::split_larger(uint64_t size) {
  auto head = free_heads_.upper_bound(size);
  if (head == free_heads_.end()) return {0, nullptr};
  auto [addr, block] = pop_free(head->first);
  uintptr_t rest_addr = addr + size;
  Block& rest = blocks_.emplace(rest_addr, Block{}).first->second;
  rest.size = block->size - size;
  rest.region = block->region;
  push_free(rest_addr, rest);
  block->size = size;
  return {addr, block};
}

void RangeAllocator::push_free(uintptr_t addr, Block& block) {
  block.live = false;
  auto [head, inserted] = free_heads_.try_emplace(block.size, addr);
  block.next_free = inserted ? 0 : head->second;
  head->second = addr;
}

std::pair<uintptr_t, Block*> RangeAllocator::find_containing(uintptr_t addr) {
  auto it = blocks_.upper_bound(addr);
  if (it == blocks_.begin()) return {0, nullptr};
  --it;
  if (addr - it->first >= it->second.size) return {0, nullptr};
  return {it->first, &it->second};
}

Block* RangeAllocator::find_live(uintptr_t addr) {
  auto it = blocks_.find(addr);
  return it != blocks_.end() && it->second.live ? &it->second : nullptr;
}

void RangeAllocator::release(uintptr_t addr, Block& block) {
  regions_.at(block.region).live--;
  block.owner = nullptr;
  block.ctx = nullptr;
  push_free(addr, block);
}

void RangeAllocator::remove_regions(const std::vector<uintptr_t>& bases) {
  if (bases.empty()) return;
  for (uintptr_t base : bases) {
    const Region& region = regions_.at(base);
    blocks_.erase(blocks_.lower_bound(base), blocks_.lower_bound(base + region.size));
    regions_.erase(base);
  }
  rebuild_free_lists();
}

// Rare path (nothing else fitted): merges runs of adjacent free blocks of one region and gives a free tail back
// to the region's bump space.
void RangeAllocator::coalesce() {
  for (auto it = blocks_.begin(); it != blocks_.end();) {
    if (it->second.live) {
      ++it;
      continue;
    }
    auto next = std::next(it);
    while (next != blocks_.end() && !next->second.live && next->second.region == it->second.region &&
           it->first + it->second.size == next->first) {
      it->second.size += next->second.size;
      next = blocks_.erase(next);
    }
    Region& region = regions_.at(it->second.region);
    if (it->first + it->second.size == it->second.region + region.bump) {
      region.bump = it->first - it->second.region;
      it = blocks_.erase(it);
    } else {
      it = next;
    }
  }
  rebuild_free_lists();
}

void RangeAllocator::rebuild_free_lists() {
  free_heads_.clear();
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it)
    if (!it->second.live) push_free(it->first, it->second);
}

}  // namespace gpumemtrace::sim
