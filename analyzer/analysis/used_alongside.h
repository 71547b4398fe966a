// The used view's reading on the second processor, alongside the first reading (docs/architecture.md, "Two
// readings at once"). The used view of a trace with heaps needs to know which allocations are heap segments,
// which the first reading finds (replay/heap_segments.h), so it was read after the first. Here the first
// reading hands its marks over every kBatch records, and the used reading follows at least kLag records
// behind: a segment's heap, made just after its allocation, has come before the used reading takes the
// allocation. When a mark comes later than that while the allocation it makes a segment is live, the
// reading alongside is not the used view's (SegmentsAhead::misjudged): it is dropped, and the used view is
// read after the first, as without it. Taken, it is the replay that reading makes, record for record.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "analyzer/replay/replay.h"
#include "analyzer/sources/trace_source.h"

namespace gpumemtrace::analysis {

class UsedAlongside {
 public:
  // `options`: the first reading's. Nothing runs before the first reading meets a heap.
  UsedAlongside(std::shared_ptr<const sources::TraceSource> source, const replay::ReplayOptions& options);
  ~UsedAlongside();  // stops the reading and waits for it
  UsedAlongside(const UsedAlongside&) = delete;
  UsedAlongside& operator=(const UsedAlongside&) = delete;

  // The first reading is at a record of `first`: the used reading starts at the first heap, and the marks
  // made since the last handover are handed over. Returns how many records to read before calling again.
  uint64_t hand_over(const replay::Replay& first);
  // The first reading has ended.
  void first_ended(const replay::Replay& first);
  bool started() const { return thread_.joinable(); }
  // Waits for the reading to end; its replay when it is the used view's, else nullptr (read it again).
  std::unique_ptr<replay::Replay> take();
  // Stops the reading soon and waits for it: it will not be taken (the used view is wanted with growth
  // windows of a phase).
  void stop();

 private:
  static constexpr uint64_t kBatch = 16384;  // records between handovers
  static constexpr uint64_t kLag = 4096;     // records a mark may come after the allocation it is of

  void hand_over(const replay::Replay& first, bool ended);
  void read();
  // Before the used reading reads `record` (from 1): the view has grown to it. False: no more records.
  bool reach(uint64_t record);

  std::shared_ptr<const sources::TraceSource> source_;
  replay::ReplayOptions options_;
  std::thread thread_;

  // The first reading's side.
  size_t marks_handed_ = 0;
  size_t heaps_handed_ = 0;

  // Between the two, under mutex_.
  std::mutex mutex_;
  std::condition_variable handed_;
  std::vector<replay::SegmentMark> marks_;        // handed over, not yet in the view
  std::vector<replay::HeapPlaces::Place> heaps_;  // likewise
  uint64_t records_ = 0;                          // read by the first reading
  bool ended_ = false;
  bool raised_ = false;  // a mark handed over had its bytes raised later (another heap over a segment)
  // Set under the lock (so that a waiting reading wakes to it), read without it between records.
  std::atomic<bool> stopped_{false};

  // The used reading's side (the thread's until it ends).
  std::shared_ptr<replay::UsedView> view_;
  std::unique_ptr<replay::Replay> used_;
  uint64_t records_known_ = 0;
  bool ended_known_ = false;
  bool whole_ = false;  // the reading went to the first reading's last record, with nothing raised
};

}  // namespace gpumemtrace::analysis
