#include "analyzer/replay/heap_segments.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

namespace gpumemtrace::replay {

void SegmentMarks::mark(uint64_t key, uint64_t record, uint64_t covered) {
  if (size_t* index = live_.find(key)) {  // heap memory again (another heap, another mapping)
    if (covered > marks_[*index].covered) {
      marks_[*index].covered = covered;
      ++raised_;
    }
    return;
  }
  live_.insert_or_assign(key, marks_.size());
  marks_.push_back({key, record, covered});
}

SegmentsAhead::SegmentsAhead(const UsedView& view, bool streamed) : view_(view), complete_(!streamed) {
  if (!streamed) view_grew(true);
}

void SegmentsAhead::view_grew(bool complete) {
  const std::vector<SegmentMark>& marks = view_.marks;
  if (marks.size() >= kNone) throw std::length_error("more heap segments than the used view holds");
  for (auto index = static_cast<uint32_t>(later_.size()); index < marks.size(); ++index) {
    const SegmentMark& mark = marks[index];
    later_.push_back(kNone);
    if (Chain* chain = upcoming_.find(mark.key)) {
      if (chain->next == kNone)
        chain->next = index;
      else
        later_[chain->last] = index;
      chain->last = index;
    } else {
      upcoming_.insert_or_assign(mark.key, Chain{index, index});
    }
    if (uint64_t* first_late = judged_early_.find(mark.key); first_late && *first_late == 0)
      *first_late = mark.record;
  }
  complete_ = complete;
}

std::optional<uint64_t> SegmentsAhead::allocated(uint64_t key, uint64_t record, uint64_t ordinal) {
  Chain* chain = upcoming_.find(key);
  // Marks before this allocation were of earlier allocations at the address.
  if (chain)
    while (chain->next != kNone && view_.marks[chain->next].record < record) chain->next = later_[chain->next];
  if (!chain || chain->next == kNone) {
    // A mark still to come would make it a segment: known only once it comes, or the allocation ends first.
    if (!complete_) {
      uint64_t* judged = judged_early_.find(key);  // an allocation over a live one (a trace that does not add up)
      if (judged && *judged != 0) misjudged_ = true;
      judged_early_.insert_or_assign(key, 0);
    }
    return std::nullopt;
  }
  if (std::binary_search(view_.not_segments.begin(), view_.not_segments.end(), ordinal)) return std::nullopt;
  const SegmentMark& mark = view_.marks[chain->next];
  live_.insert_or_assign(key, Pending{mark.record, ordinal});
  return mark.covered;
}

bool SegmentsAhead::freed(uint64_t key, uint64_t record) {
  if (uint64_t first_late = 0; judged_early_.size() > 0 && judged_early_.erase(key, &first_late))
    if (first_late != 0 && first_late <= record) misjudged_ = true;  // the whole view would have taken it
  Pending pending;
  if (!live_.erase(key, &pending)) return false;
  if (record < pending.record) mistakes_.push_back(pending.ordinal);  // gone before the heap came
  return true;
}

void SegmentsAhead::finish() {
  judged_early_.for_each([&](uint64_t, uint64_t first_late) { misjudged_ = misjudged_ || first_late != 0; });
}

}  // namespace gpumemtrace::replay
