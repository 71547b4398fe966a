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

#include "analyzer/replay/address_map.h"
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

 private:
  std::vector<SegmentMark> marks_;
  AddressMap<size_t> live_;  // a live marked allocation -> its mark
};

class SegmentsAhead {
 public:
  explicit SegmentsAhead(const UsedView& view);

  // An allocation taken at `record`: the bytes of it that are heap memory (it is a segment), or nothing.
  std::optional<uint64_t> allocated(uint64_t key, uint64_t record, uint64_t ordinal);
  // Its free at `record`. True when it was a segment.
  bool freed(uint64_t key, uint64_t record);
  // The allocations (ordinals) taken for segments that were not, in the order their frees came.
  const std::vector<uint64_t>& mistakes() const { return mistakes_; }

 private:
  // The marks of one address: by_address_[next, end), in record order.
  struct Upcoming {
    uint32_t next = 0;
    uint32_t end = 0;
  };
  struct Pending {
    uint64_t record = 0;  // of its mark
    uint64_t ordinal = 0;
  };
  const std::vector<SegmentMark>& marks_;
  std::vector<uint32_t> by_address_;  // the marks' indexes, by address, then in record order
  AddressMap<Upcoming> upcoming_;      // a long PyTorch history has a mark per segment: no node for each
  AddressMap<Pending> live_;  // live allocations taken for segments
  const std::vector<uint64_t>& not_segments_;
  std::vector<uint64_t> mistakes_;
};

}  // namespace gpumemtrace::replay
