#include "analyzer/analysis/used_alongside.h"

#include <utility>

namespace gpumemtrace::analysis {

namespace {
constexpr uint64_t kLookForHeapsEvery = 1024;  // records, before the first heap
}  // namespace

UsedAlongside::UsedAlongside(std::shared_ptr<const sources::TraceSource> source, const replay::ReplayOptions& options)
    : source_(std::move(source)), options_(options), view_(std::make_shared<replay::UsedView>()) {
  options_.used_view = view_;
  options_.used_view_streamed = true;
}

UsedAlongside::~UsedAlongside() { stop(); }

void UsedAlongside::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_.store(true, std::memory_order_relaxed);
  }
  handed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t UsedAlongside::hand_over(const replay::Replay& first) {
  if (!started() && first.heaps().created() == 0) return kLookForHeapsEvery;
  hand_over(first, false);
  return kBatch;
}

void UsedAlongside::hand_over(const replay::Replay& first, bool ended) {
  if (!started()) thread_ = std::thread([this] { read(); });
  const std::vector<replay::SegmentMark>& marks = first.segment_marks();
  const replay::HeapPlaces& places = first.heaps().places();
  {
    std::lock_guard lock(mutex_);
    marks_.insert(marks_.end(), marks.begin() + static_cast<std::ptrdiff_t>(marks_handed_), marks.end());
    for (size_t i = heaps_handed_; i < places.size(); ++i) heaps_.push_back(places[i]);
    records_ = first.records_read();
    ended_ = ended;
    // A raised mark may be one handed over already, which the used reading may have taken with fewer bytes.
    raised_ = first.segment_marks_raised() > 0;
  }
  handed_.notify_one();
  marks_handed_ = marks.size();
  heaps_handed_ = places.size();
}

void UsedAlongside::first_ended(const replay::Replay& first) {
  if (started() || first.heaps().created() > 0) hand_over(first, true);
}

bool UsedAlongside::reach(uint64_t record) {
  if (stopped_.load(std::memory_order_relaxed)) return false;
  if (record + kLag <= records_known_ || (ended_known_ && record <= records_known_)) return true;
  if (ended_known_) return false;
  std::vector<replay::SegmentMark> marks;
  std::vector<replay::HeapPlaces::Place> heaps;
  {
    std::unique_lock lock(mutex_);
    handed_.wait(lock, [&] { return stopped_.load(std::memory_order_relaxed) || raised_ || ended_ || record + kLag <= records_; });
    if (stopped_.load(std::memory_order_relaxed) || raised_) return false;
    marks.swap(marks_);
    heaps.swap(heaps_);
    records_known_ = records_;
    ended_known_ = ended_;
  }
  view_->marks.insert(view_->marks.end(), marks.begin(), marks.end());
  for (const replay::HeapPlaces::Place& place : heaps) view_->heaps.add(place);
  used_->used_view_grew(ended_known_);
  return record <= records_known_;
}

void UsedAlongside::read() {
  try {
    used_ = std::make_unique<replay::Replay>(options_);
    sources::SourceRecords records = source_->records(UINT64_MAX);
    uint64_t record = 1;
    for (; reach(record); ++record) {
      const trace::Record* next = records.next();
      if (!next) break;
      used_->on_record(*next, records.reader());
    }
    used_->finish(records.trace());
    whole_ = ended_known_ && record == records_known_ + 1;
  } catch (...) {
    // Dropped: the used view is read after the first reading, which meets the same failure.
    whole_ = false;
  }
}

std::unique_ptr<replay::Replay> UsedAlongside::take() {
  if (!thread_.joinable()) return nullptr;
  thread_.join();
  if (!whole_ || !used_ || used_->used_view_misjudged()) return nullptr;
  return std::move(used_);
}

}  // namespace gpumemtrace::analysis
