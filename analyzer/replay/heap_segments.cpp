#include "analyzer/replay/heap_segments.h"

#include <algorithm>

namespace gpumemtrace::replay {

void SegmentMarks::mark(uint64_t key, uint64_t record, uint64_t covered) {
  if (size_t* index = live_.find(key)) {  // heap memory again (another heap, another mapping)
    marks_[*index].covered = std::max(marks_[*index].covered, covered);
    return;
  }
  live_.insert_or_assign(key, marks_.size());
  marks_.push_back({key, record, covered});
}

SegmentsAhead::SegmentsAhead(const UsedView& view) : not_segments_(view.not_segments) {
  for (const SegmentMark& mark : view.marks) upcoming_[mark.key].marks.push_back(mark);
}

std::optional<uint64_t> SegmentsAhead::allocated(uint64_t key, uint64_t record, uint64_t ordinal) {
  auto it = upcoming_.find(key);
  if (it == upcoming_.end()) return std::nullopt;
  Upcoming& upcoming = it->second;
  // Marks before this allocation were of earlier allocations at the address.
  while (upcoming.next < upcoming.marks.size() && upcoming.marks[upcoming.next].record < record) ++upcoming.next;
  if (upcoming.next == upcoming.marks.size()) return std::nullopt;
  if (std::binary_search(not_segments_.begin(), not_segments_.end(), ordinal)) return std::nullopt;
  const SegmentMark& mark = upcoming.marks[upcoming.next];
  live_.insert_or_assign(key, Pending{mark.record, ordinal});
  return mark.covered;
}

bool SegmentsAhead::freed(uint64_t key, uint64_t record) {
  Pending pending;
  if (!live_.erase(key, &pending)) return false;
  if (record < pending.record) mistakes_.push_back(pending.ordinal);  // gone before the heap came
  return true;
}

}  // namespace gpumemtrace::replay
