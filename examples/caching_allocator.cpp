#include "caching_allocator.h"

#include <cuda_runtime_api.h>

#include <algorithm>

namespace {

constexpr size_t kMiB = 1 << 20;
constexpr size_t kRound = 512;            // every block size is a multiple of this
constexpr size_t kSmallSize = 1 * kMiB;   // the largest small request
constexpr size_t kSmallSegment = 2 * kMiB;
constexpr size_t kMidSize = 10 * kMiB;    // requests below this share 20 MiB segments
constexpr size_t kMidSegment = 20 * kMiB;
constexpr size_t kLargeRound = 2 * kMiB;  // a larger request's own segment is rounded up to this

size_t round_up(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

size_t segment_size(size_t size) {
  if (size <= kSmallSize) return kSmallSegment;
  if (size < kMidSize) return kMidSegment;
  return round_up(size, kLargeRound);
}

// Whether what is left of a free block after cutting `size` from it is worth keeping as a block of its own.
bool worth_splitting(size_t block_size, size_t size, bool small) {
  size_t rest = block_size - size;
  return small ? rest >= kRound : rest > kSmallSize;
}

// The NVTX memory extension, one call per event; its descriptors are versioned by their size.
nvtxMemHeapHandle_t register_heap(nvtxDomainHandle_t domain, void* base, size_t size, const char* name) {
  nvtxMemVirtualRangeDesc_t range{size, base};
  nvtxMemHeapDesc_t desc{};
  desc.extCompatID = NVTX_EXT_COMPATID_MEM;
  desc.structSize = sizeof(desc);
  desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  desc.typeSpecificDescSize = sizeof(range);
  desc.typeSpecificDesc = &range;
  desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
  desc.message.ascii = name;
  return nvtxMemHeapRegister(domain, &desc);
}

void register_region(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap, void* address, size_t size,
                     const char* name) {
  nvtxMemVirtualRangeDesc_t range{size, address};
  nvtxMemRegionsRegisterBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.heap = heap;
  batch.regionCount = 1;
  batch.regionDescElementSize = sizeof(range);
  batch.regionDescElements = &range;
  nvtxMemRegionsRegister(domain, &batch);

  nvtxMemRegionNameDesc_t region_name{};
  region_name.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  region_name.nameType = NVTX_MESSAGE_TYPE_ASCII;
  region_name.region.pointer = address;
  region_name.name.ascii = name;
  nvtxMemRegionsNameBatch_t names{};
  names.extCompatID = NVTX_EXT_COMPATID_MEM;
  names.structSize = sizeof(names);
  names.regionCount = 1;
  names.regionElementSize = sizeof(region_name);
  names.regionElements = &region_name;
  nvtxMemRegionsName(domain, &names);
}

void unregister_region(nvtxDomainHandle_t domain, void* address) {
  nvtxMemRegionRef_t ref{};
  ref.pointer = address;
  nvtxMemRegionsUnregisterBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  batch.refCount = 1;
  batch.refElementSize = sizeof(ref);
  batch.refElements = &ref;
  nvtxMemRegionsUnregister(domain, &batch);
}

}  // namespace

CachingAllocator::CachingAllocator() : domain_(nvtxDomainCreateA("caching allocator")) {}

CachingAllocator::~CachingAllocator() {
  while (!segments_.empty()) free_segment(segments_.back());
  nvtxDomainDestroy(domain_);
}

void* CachingAllocator::allocate(size_t bytes, const char* what) {
  size_t size = round_up(std::max<size_t>(bytes, 1), kRound);
  bool small = size <= kSmallSize;
  Block* block = take_free_block(size, small);
  if (!block) block = new_segment(size, small);
  if (!block) {  // the device is full: give back the unused segments and try once more
    size_t before = reserved_;
    empty_cache();
    if (reserved_ < before) block = new_segment(size, small);
  }
  if (!block) return nullptr;

  if (worth_splitting(block->size, size, small)) {
    Block* rest = new Block{block->address + size, block->size - size, false, block->segment, block, block->next};
    if (block->next) block->next->prev = rest;
    block->next = rest;
    block->size = size;
    pool_of(small).insert(rest);
  }
  block->in_use = true;
  in_use_[block->address] = block;
  allocated_ += block->size;
  register_region(domain_, block->segment->heap, block->address, block->size, what);
  return block->address;
}

CachingAllocator::Block* CachingAllocator::take_free_block(size_t size, bool small) {
  Pool& pool = pool_of(small);
  Block key;
  key.size = size;  // the smallest free block of at least `size`, the lowest address among equals
  auto it = pool.lower_bound(&key);
  if (it == pool.end()) return nullptr;
  Block* block = *it;
  pool.erase(it);
  return block;
}

CachingAllocator::Block* CachingAllocator::new_segment(size_t size, bool small) {
  size_t bytes = segment_size(size);
  void* base = nullptr;
  if (cudaMalloc(&base, bytes) != cudaSuccess) return nullptr;
  auto* segment = new Segment{static_cast<char*>(base), bytes, small, nullptr, nullptr};
  segment->heap = register_heap(domain_, base, bytes, small ? "small pool" : "large pool");
  segment->first = new Block{segment->base, bytes, false, segment, nullptr, nullptr};
  segments_.push_back(segment);
  reserved_ += bytes;
  return segment->first;
}

void CachingAllocator::release(void* address) {
  auto it = in_use_.find(address);
  if (it == in_use_.end()) return;
  Block* block = it->second;
  in_use_.erase(it);
  unregister_region(domain_, address);
  allocated_ -= block->size;
  block->in_use = false;

  Pool& pool = pool_of(block->segment->small);
  auto absorb = [&](Block* into, Block* gone) {  // `gone` directly follows `into`
    into->size += gone->size;
    into->next = gone->next;
    if (gone->next) gone->next->prev = into;
    delete gone;
  };
  if (Block* next = block->next; next && !next->in_use) {
    pool.erase(next);
    absorb(block, next);
  }
  if (Block* prev = block->prev; prev && !prev->in_use) {
    pool.erase(prev);
    absorb(prev, block);
    block = prev;
  }
  pool.insert(block);
}

void CachingAllocator::empty_cache() {
  std::vector<Segment*> unused;
  for (Segment* segment : segments_)
    if (!segment->first->in_use && segment->first->size == segment->size) unused.push_back(segment);
  for (Segment* segment : unused) free_segment(segment);
}

void CachingAllocator::free_segment(Segment* segment) {
  bool blocks_in_use = false;
  for (Block* block = segment->first; block;) {
    Block* next = block->next;
    if (block->in_use) {
      blocks_in_use = true;
      in_use_.erase(block->address);
      allocated_ -= block->size;
    } else {
      pool_of(segment->small).erase(block);
    }
    delete block;
    block = next;
  }
  if (blocks_in_use) nvtxMemHeapReset(domain_, segment->heap);  // blocks never released go with it
  nvtxMemHeapUnregister(domain_, segment->heap);
  cudaFree(segment->base);
  reserved_ -= segment->size;
  std::erase(segments_, segment);
  delete segment;
}

size_t CachingAllocator::largest_free_block() const {
  size_t largest = 0;
  for (const Pool* pool : {&small_pool_, &large_pool_})
    if (!pool->empty()) largest = std::max(largest, (*pool->rbegin())->size);
  return largest;
}
