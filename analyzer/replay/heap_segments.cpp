#include "analyzer/replay/heap_segments.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

namespace gpumemtrace::replay {

void SegmentMarks::mark(uint64_t key, uint64_t record, uint64_t covered) {
  if (size_t* index = live_.find(key)) {  // heap memory again (another heap, another mapping)
    marks_[*index].covered = std::max(marks_[*index].covered, covered);
    return;
  }
  live_.insert_or_assign(key, marks_.size());
  marks_.push_back({key, record, covered});
}

SegmentsAhead::SegmentsAhead(const UsedView& view) : marks_(view.marks), not_segments_(view.not_segments) {
  if (marks_.size() > UINT32_MAX) throw std::length_error("more heap segments than the used view holds");
  // Sorted as (key, index) pairs side by side, not indexes compared through the marks: a long history has
  // millions of marks, and each comparison was two loads from anywhere in them.
  std::vector<std::pair<uint64_t, uint32_t>> keyed(marks_.size());
  for (uint32_t i = 0; i < keyed.size(); ++i) keyed[i] = {marks_[i].key, i};
  std::sort(keyed.begin(), keyed.end());
  by_address_.resize(keyed.size());
  for (size_t i = 0; i < keyed.size(); ++i) by_address_[i] = keyed[i].second;
  for (uint32_t first = 0, end = 0; first < by_address_.size(); first = end) {
    uint64_t key = marks_[by_address_[first]].key;
    for (end = first + 1; end < by_address_.size() && marks_[by_address_[end]].key == key;) ++end;
    upcoming_.insert_or_assign(key, Upcoming{first, end});
  }
}

std::optional<uint64_t> SegmentsAhead::allocated(uint64_t key, uint64_t record, uint64_t ordinal) {
  Upcoming* upcoming = upcoming_.find(key);
  if (!upcoming) return std::nullopt;
  // Marks before this allocation were of earlier allocations at the address.
  while (upcoming->next < upcoming->end && marks_[by_address_[upcoming->next]].record < record) ++upcoming->next;
  if (upcoming->next == upcoming->end) return std::nullopt;
  if (std::binary_search(not_segments_.begin(), not_segments_.end(), ordinal)) return std::nullopt;
  const SegmentMark& mark = marks_[by_address_[upcoming->next]];
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
