// A recorded run's PyTorch history, as the replays of the allocator model take it (whatif, fit): the snapshots a
// trace names (or the snapshot itself), loaded, joined into one history, with the device's memory its
// out-of-memory records give.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/sources/pytorch/joined_history.h"
#include "analyzer/sources/snapshot_join_steps.h"

namespace gpumemtrace::report {

// Why a path has no history to replay: no PyTorch snapshot in it or beside it, or its snapshots unreadable.
class HistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The path names no PyTorch snapshot at all.
class NoHistoryError : public HistoryError {
 public:
  using HistoryError::HistoryError;
};

struct RecordedHistory {
  std::vector<sources::join::LoadedSnapshot> loaded;  // their entries may be changed in place (fit scales sizes)
  std::vector<pytorch::TakenSnapshot> taken;          // one per loaded snapshot, in the same order
  pytorch::JoinedHistory history;
  uint64_t device_total = 0;  // from the trace's out-of-memory records; 0: not said
  int32_t busiest_device = 0;  // the device whose history has the most entries

  // The history's entry of a step, to read or change.
  pytorch::SnapshotEntry& entry(const pytorch::HistoryStep& step) {
    return loaded[step.snapshot].snapshot.device_traces[static_cast<size_t>(step.device)][step.entry];
  }
};

// Throws HistoryError (also for a path that is neither a trace nor a snapshot).
RecordedHistory load_recorded_history(const std::string& path);

}  // namespace gpumemtrace::report
