// Sub-allocator heaps in the replay (docs/reports.md, "Fragmentation"): each heap's memory and the blocks a
// program's own allocator handed out in it (HeapCreate, SubAlloc, SubFree, SubName, HeapReset, HeapDestroy).
//
// For a heap whose memory is [base, base+reserved):
//   allocated  the bytes asked for by its live blocks;
//   internal   the sum over live blocks of reserved for the block - asked, where the allocator said both;
//   pending    the blocks the program freed that the allocator still holds (SubFreeRequested): their bytes;
//   external   free gaps: the heap's memory not covered by a block (a block covers its reserved bytes, or its
//              asked bytes when reserved is not said), and the pending blocks, which the program freed; so
//              allocated + internal + external = reserved (as PyTorch's _memory_viz.py counts them);
//   largest    the largest free gap; fragmentation = 1 - largest / external (0 without free memory).
// The gaps are found by a walk over the heap's blocks in address order, so they are computed only when
// asked for (at out-of-memory failures and for reports), never per event. Allocated over time is kept per
// window of the replay's timeline clock (the most allocated in each).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/address_map.h"
#include "analyzer/replay/windowed_series.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::replay {

struct HeapBlock {
  uint64_t size = 0;      // asked for
  uint64_t reserved = 0;  // set aside for it; 0: not said
  std::string name;       // what it holds (SubName); empty: not said
  bool free_requested = false;  // freed by the program, still held by the allocator (SubFreeRequested)
  uint32_t stack = 0;           // the replay's StackId of the request
  uint64_t footprint() const { return reserved > size ? reserved : size; }
};

// A heap's figures at one moment.
// Declared once for the struct, add() and the JSON writer (docs/reports.md, in this order).
// X(member, JSON key or "" for none, how two heaps' figures combine: sum or max)
#define GPUMEMTRACE_HEAP_FIGURES(X)                                                                    \
  X(reserved_bytes, "reserved_bytes", sum) /* the heap's memory (0: not said) */                         \
  X(allocated_bytes, "allocated_bytes", sum)                                                             \
  X(blocks, "blocks", sum) /* live blocks, not those of pending_bytes */                                 \
  X(internal_bytes, "internal_bytes", sum)                                                               \
  X(external_bytes, "external_bytes", sum) /* 0 when the heap's memory is not said */                    \
  X(pending_bytes, "pending_free_bytes", sum) /* blocks freed but still held (part of external) */       \
  X(pending_requested_bytes, "", sum) /* what had been asked for them */                                 \
  X(pending_blocks, "pending_free_blocks", sum)                                                          \
  X(free_blocks, "free_blocks", sum) /* the free gaps */                                                 \
  X(largest_free_bytes, "largest_free_block_bytes", max)
struct HeapFigures {
#define GPUMEMTRACE_FIGURE_MEMBER(member, json_key, combine) uint64_t member = 0;
  GPUMEMTRACE_HEAP_FIGURES(GPUMEMTRACE_FIGURE_MEMBER)
#undef GPUMEMTRACE_FIGURE_MEMBER
  // Adds another heap's figures: each combined as its row says.
  void add(const HeapFigures& other);
  double fragmentation() const {
    return external_bytes == 0 ? 0.0
                               : 1.0 - static_cast<double>(largest_free_bytes) / static_cast<double>(external_bytes);
  }
};

// The memory of the heaps not destroyed: base -> end.
using LiveHeapMemory = std::multimap<uint64_t, uint64_t>;

struct Heap {
  uint64_t id = 0;
  std::string name;
  int32_t device = trace::kNoDevice;  // kNoDevice: not said
  trace::MemoryKind kind = trace::MemoryKind::Device;  // of its segments: its blocks' in the used view
  uint64_t base = 0;
  uint64_t size = 0;  // 0: not said
  uint64_t created_ns = 0;
  bool destroyed = false;
  uint64_t allocated_bytes = 0;  // now
  uint64_t internal_bytes = 0;   // now
  uint64_t pending_bytes = 0;    // now
  uint64_t pending_requested_bytes = 0;
  uint64_t pending_blocks = 0;
  uint64_t peak_allocated_bytes = 0;
  uint64_t peak_ns = 0;
  WindowedSeries<Reduce::Max> allocated_series;  // by timeline window
  std::map<uint64_t, HeapBlock> blocks;  // the live blocks, by address
  // Its memory in the tracker's LiveHeapMemory, while it is there: erased without a search when it goes.
  std::optional<LiveHeapMemory::iterator> live_memory;

  HeapFigures figures() const;
};

// The heaps a failed request of a device could have been served from: those of the device and those whose
// device was not said, with known memory, not destroyed.
struct HeapsAtFailure {
  uint32_t heaps = 0;
  uint64_t reserved_bytes = 0;
  uint64_t allocated_bytes = 0;
  uint64_t free_bytes = 0;          // the heaps' external bytes, summed: their free gaps and pending blocks
  uint64_t free_blocks = 0;         // the free gaps
  uint64_t pending_bytes = 0;       // the blocks freed but held until the GPU is done with them
  uint64_t largest_free_bytes = 0;  // the largest free gap of any of them
  uint32_t idle_heaps = 0;          // heaps with no block in them, live or pending (a whole segment cached)
  uint64_t idle_bytes = 0;          // their memory
  bool known() const { return heaps > 0; }
};

// Where each heap ever created is, its device and the memory kind of its segments, in the order they were
// created, kept as runs of equal places: a long PyTorch history has a heap per segment, nearly all in one place.
class HeapPlaces {
 public:
  struct Place {
    int32_t device = trace::kNoDevice;
    trace::MemoryKind kind = trace::MemoryKind::Device;
    bool operator==(const Place&) const = default;
  };
  void add(Place place);
  size_t size() const { return size_; }
  Place operator[](size_t index) const;  // index < size()

 private:
  struct Run {
    size_t first = 0;  // the index of its first heap
    Place place;
  };
  std::vector<Run> runs_;
  size_t size_ = 0;
};

// The destroyed heaps of a device that are not kept (HeapTracker's `destroyed_kept`), counted together.
struct FoldedHeaps {
  uint64_t heaps = 0;
  uint64_t reserved_bytes = 0;        // their memory, summed
  uint64_t peak_allocated_bytes = 0;  // the most any one of them held
};

// Records that do not add up, counted and otherwise ignored.
struct HeapInconsistencies {
  uint64_t unknown_heaps = 0;   // a record of a heap never created (kept as a heap of unknown memory)
  uint64_t unknown_blocks = 0;  // a SubFree or SubName of no live block of the heap
};

class HeapTracker {
 public:
  // Keeps every live heap and, of each device's destroyed ones, the `destroyed_kept` with the highest peak
  // (then the first created); the others are folded into FoldedHeaps, so that memory follows the heaps alive
  // rather than every segment a long history ever had. Folding happens now and then, and at finish().
  // `for_reports`: each heap's name, its allocated bytes over time and the memory of the live heaps (for
  // covered()) are kept, as the reports show them. A used reading keeps only what it counts by: the blocks,
  // and each heap's place and figures now (its heaps are never shown, and it knows the segments already:
  // heap_segments.h).
  explicit HeapTracker(uint64_t destroyed_kept = UINT64_MAX, bool for_reports = true)
      : destroyed_kept_(destroyed_kept), for_reports_(for_reports) {}

  // The timeline window the records that follow are in, and the merge of windows (TimeSlices).
  void at_window(uint32_t window) { window_ = window; }
  void halve(uint32_t window);

  void on(const trace::HeapCreate& create, trace::MemoryKind kind = trace::MemoryKind::Device);
  void on(const trace::HeapDestroy& destroy);
  void on(const trace::HeapReset& reset);
  void on(const trace::SubAlloc& alloc, uint32_t stack = 0);  // the StackId of alloc.stack
  void on(const trace::SubFree& free);
  void on(const trace::SubFreeRequested& free);
  void on(const trace::SubName& name);

  // Folds what is left to fold: after it, heaps() holds only what is kept.
  void finish() { fold_destroyed(); }

  // The heaps kept, in the order they were created (heap 0, the blocks of no heap, is not one of them).
  const std::vector<Heap>& heaps() const { return heaps_; }
  // Every heap ever created, kept or folded, and where each is.
  size_t created() const { return places_.size(); }
  const HeapPlaces& places() const { return places_; }
  // The destroyed heaps of `device` not kept.
  FoldedHeaps folded(int32_t device) const;
  const Heap* heap(uint64_t id) const;  // the heap of that id now, or nullptr
  // The most bytes of [address, address + size) in the memory of one live heap (heaps do not overlap); 0
  // unless for reports.
  uint64_t covered(uint64_t address, uint64_t size) const;
  bool has_live_memory() const { return !live_memory_.empty(); }
  // The live block at `address` in `heap` (0: the blocks of no heap), or nullptr.
  const HeapBlock* block(uint64_t heap, uint64_t address) const;
  HeapsAtFailure at_failure(int32_t device) const;
  uint64_t loose_blocks() const { return loose_blocks_; }  // live blocks of no heap
  const HeapInconsistencies& inconsistencies() const { return inconsistencies_; }

 private:
  Heap* find(uint64_t id);
  Heap& find_or_add(uint64_t id);
  Heap& add(uint64_t id, HeapPlaces::Place place);
  void fold_destroyed();
  // The live block at `address` in heap `heap_id` (0: of no heap), and its heap; nullptr when there is none.
  std::pair<Heap*, HeapBlock*> find_block(uint64_t heap_id, uint64_t address);
  void release(Heap& heap, HeapBlock& block);
  void remove(Heap& heap, std::map<uint64_t, HeapBlock>::iterator block);
  void free_all(Heap& heap);
  // The heap's allocated bytes now, into its series (for reports).
  void track_allocated(Heap& heap);

  std::vector<Heap> heaps_;
  AddressMap<size_t> index_;  // heap id -> its place in heaps_ (none once folded)
  HeapPlaces places_;
  uint64_t destroyed_kept_;
  bool for_reports_;
  static constexpr size_t kFoldAtLeast = 16384;  // destroyed heaps (4 MB of them), so that folding is rare
  size_t destroyed_ = 0;                        // destroyed heaps in heaps_
  size_t fold_at_ = kFoldAtLeast;               // folding happens when destroyed_ reaches it
  std::map<int32_t, FoldedHeaps> folded_;
  struct FoldScratch {
    std::map<int32_t, std::vector<size_t>> destroyed;  // a device's destroyed heaps: their places in heaps_
    std::vector<uint8_t> folding;                      // by place in heaps_
  } fold_scratch_;
  std::unordered_map<uint64_t, HeapBlock> loose_;  // the live blocks of heap 0, by address
  LiveHeapMemory live_memory_;
  uint64_t loose_blocks_ = 0;
  uint32_t window_ = 0;
  HeapInconsistencies inconsistencies_;
};

}  // namespace gpumemtrace::replay
