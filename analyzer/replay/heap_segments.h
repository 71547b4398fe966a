// Which driver allocations hold heap memory, for the used view (docs/reports.md, "Views"). A heap's memory
// is [address, address + size) of its HeapCreate; a pointer allocation, or VMM physical memory mapped
// there, is one of its segments when its memory is the heap's while both are live. In the used view a
// segment's bytes inside heap memory never count, from its allocation on: the heap's blocks count instead.
//
// A segment is only known to be one when its heap is created, after its allocation, so the used view
// needs two readings of the trace:
//   SegmentMarks    in the first, marks each segment when it becomes heap memory: the record of its
//                   HeapCreate (or of the allocation or mapping made inside a live heap) and the bytes of
//                   it the heap covers;
//   SegmentsAhead   in the used reading, takes an allocation for the segment of the next mark at its
//                   address, and leaves it out from its allocation on. It is wrong only when that allocation
//                   is freed before the mark's record (the address held something else first): it says so
//                   (mistakes()), and the reading is done again with those allocations known.
// Both cost memory in the number of segments, never in the number of events.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/address_map.h"
#include "analyzer/replay/heaps.h"
#include "trace/reader/records.h"

namespace gpumemtrace::replay {

struct SegmentMark {
  uint64_t key = 0;      // the allocation: its address and address space (Replay's instance key)
  uint64_t record = 0;   // the record at which it became heap memory (records counted from 1)
  uint64_t covered = 0;  // its bytes inside heap memory (the most any one heap covered)
};

// What the used reading is made with: the first reading's marks; where each heap is (the first reading
// found its device and memory kind from its segments, which the used reading leaves out); and the
// allocations (by ordinal: the n-th allocation the replay took, from 1) an earlier used reading took for
// segments by mistake.
struct UsedView {
  std::vector<SegmentMark> marks;      // in record order
  HeapPlaces heaps;                    // in the order they were created
  std::vector<uint64_t> not_segments;  // sorted
};

class SegmentMarks {
 public:
  // The allocation `key`, live, is heap memory from `record` on; `covered` of its bytes.
  void mark(uint64_t key, uint64_t record, uint64_t covered);
  void freed(uint64_t key) {
    if (live_.size() > 0) live_.erase(key);
  }
  const std::vector<SegmentMark>& marks() const { return marks_; }
  // How many times a mark already made had its bytes raised (another heap, another mapping over it).
  uint64_t raised() const { return raised_; }

 private:
  std::vector<SegmentMark> marks_;
  AddressMap<size_t> live_;  // a live marked allocation -> its mark
  uint64_t raised_ = 0;
};

class SegmentsAhead {
 public:
  // The first reading's whole view; or, `streamed`, a view that grows as the first reading goes on
  // (view_grew): the used reading alongside the first (analysis/used_alongside.h).
  SegmentsAhead(const UsedView& view, bool streamed);

  // Streamed: the view has grown, by marks (in record order) and heaps the first reading made; `complete`:
  // it is whole. The marks up to a record have come before the used reading reaches it.
  void view_grew(bool complete);

  // An allocation taken at `record`: the bytes of it that are heap memory (it is a segment), or nothing.
  std::optional<uint64_t> allocated(uint64_t key, uint64_t record, uint64_t ordinal);
  // Its free at `record`. True when it was a segment.
  bool freed(uint64_t key, uint64_t record);
  // The reading has ended.
  void finish();
  // The allocations (ordinals) taken for segments that were not, in the order their frees came.
  const std::vector<uint64_t>& mistakes() const { return mistakes_; }
  // Where each heap is, in the order they were created.
  const HeapPlaces& heaps() const { return view_.heaps; }
  // Streamed: an allocation was judged no segment while the mark that makes it one had not come (it came
  // later, while the allocation was live): this reading is not the used view's. Read after finish().
  bool misjudged() const { return misjudged_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // The marks of one address not yet passed, in record order: a chain through later_.
  struct Chain {
    uint32_t next = kNone;
    uint32_t last = kNone;
  };
  struct Pending {
    uint64_t record = 0;  // of its mark
    uint64_t ordinal = 0;
  };

  const UsedView& view_;
  std::vector<uint32_t> later_;  // per mark indexed: the next mark of its address
  AddressMap<Chain> upcoming_;   // a long PyTorch history has a mark per segment: no node for each
  AddressMap<Pending> live_;     // live allocations taken for segments
  std::vector<uint64_t> mistakes_;
  bool complete_ = true;  // every mark has come
  // Streamed: live allocations judged no segment before every mark had come -> the record of the first mark
  // at their address that came after (0: none yet).
  AddressMap<uint64_t> judged_early_;
  bool misjudged_ = false;
};

}  // namespace gpumemtrace::replay
