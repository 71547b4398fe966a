// A caching allocator in miniature, shaped like PyTorch's CUDA caching allocator: it takes memory from the
// device in segments (cudaMalloc) and keeps it after the program frees a block, to hand it out again without
// asking the device. Sizes are rounded up to 512 bytes. Small requests (up to 1 MiB) are cut from 2 MiB
// segments, mid-size ones (up to 10 MiB) from 20 MiB segments, and a larger one gets a segment of its own,
// rounded up to 2 MiB. A request takes the smallest free block it fits in (the lowest address among equals),
// split when the rest is worth keeping; a freed block merges with its free neighbours.
//
// Only whole free segments go back to the device, so blocks kept alive in many segments can leave plenty
// of free memory in the cache with no single free block large enough: fragmentation.
//
// It tells tools what it does through NVIDIA's NVTX memory extension (nvtx3/nvToolsExtMem.h): each segment
// is a heap, each block handed out a region, named after what it holds. Without a tool these calls do
// nothing.
#pragma once

#include <cstddef>
#include <set>
#include <unordered_map>
#include <vector>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

class CachingAllocator {
 public:
  CachingAllocator();
  ~CachingAllocator();  // every segment goes back to the device
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `bytes` bytes for `what` (its name for tools), or nullptr when the device has no
  // room for a new segment even after the cache gave back its unused ones.
  void* allocate(size_t bytes, const char* what);
  void release(void* block);
  // Gives the segments that have no block in use back to the device (torch.cuda.empty_cache()).
  void empty_cache();

  size_t reserved_bytes() const { return reserved_; }    // held from the device
  size_t allocated_bytes() const { return allocated_; }  // in blocks handed out (rounded sizes)
  size_t largest_free_block() const;

 private:
  struct Segment;
  struct Block {
    char* address = nullptr;
    size_t size = 0;
    bool in_use = false;
    Segment* segment = nullptr;
    Block* prev = nullptr;  // the neighbours in the segment, in address order
    Block* next = nullptr;
  };
  struct Segment {
    char* base = nullptr;
    size_t size = 0;
    bool small = false;
    nvtxMemHeapHandle_t heap = nullptr;
    Block* first = nullptr;
  };
  // Free blocks by size, then address: lower_bound finds the best fit.
  struct BySize {
    bool operator()(const Block* a, const Block* b) const {
      return a->size != b->size ? a->size < b->size : a->address < b->address;
    }
  };
  using Pool = std::set<Block*, BySize>;

  Pool& pool_of(bool small) { return small ? small_pool_ : large_pool_; }
  Block* take_free_block(size_t size, bool small);
  Block* new_segment(size_t size, bool small);
  void free_segment(Segment* segment);

  nvtxDomainHandle_t domain_;
  Pool small_pool_, large_pool_;
  std::vector<Segment*> segments_;
  std::unordered_map<void*, Block*> in_use_;
  size_t reserved_ = 0;
  size_t allocated_ = 0;
};
