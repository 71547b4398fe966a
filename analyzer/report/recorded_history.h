// The PyTorch history a run recorded: the snapshots a trace names (or a snapshot itself) read and joined, for the
// allocator model to replay (allocator_model/history_replay.h). Shared by whatif (whatif_model.h), the what-if
// of an out-of-memory failure (oom_whatif.h) and fit (batch_fit.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/allocator_model/history_replay.h"
#include "analyzer/analysis/passes.h"
#include "analyzer/allocator_model/settings.h"
#include "analyzer/report/heap_requests.h"
#include "analyzer/sources/snapshot_join_steps.h"

namespace gpumemtrace::report {

// Why a path cannot be replayed: no PyTorch history in it or beside it, or its snapshots unreadable.
class WhatifError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The path names no PyTorch snapshot at all (fit then works on raw bytes).
class NoHistoryError : public WhatifError {
 public:
  using WhatifError::WhatifError;
};

// The snapshots a trace names, with each device's memory its out-of-memory records give; or the snapshot itself.
// Without snapshots, the blocks the trace's sub-allocators handed out.
struct Recorded {
  std::vector<sources::NamedSnapshot> named;
  bool snapshot_alone = false;  // the path is a snapshot
  std::map<int32_t, uint64_t> device_total;  // by device, the largest total said
  std::vector<HeapRequests> heaps;           // read only when the trace names no snapshot
  std::shared_ptr<replay::StackTable> stacks;  // the heap blocks' stacks (HeapRequests::stacks)
};
// Throws WhatifError when the path is neither a readable trace nor a snapshot.
Recorded read_recorded(const std::string& path, analysis::PassCounts& passes);

class RecordedHistory {
 public:
  // The history of the trace or snapshot at `path` (read_recorded, then its snapshots). Throws NoHistoryError when
  // it names no snapshot, WhatifError when none can be read.
  static RecordedHistory load(const std::string& path, analysis::PassCounts& passes);
  // The snapshots `named` beside the trace at `trace_path`. Throws WhatifError when none can be read.
  RecordedHistory(const std::string& trace_path, std::span<const sources::NamedSnapshot> named,
                  analysis::PassCounts& passes);
  // A PyTorch snapshot file read as the whole history.
  static std::vector<sources::NamedSnapshot> snapshot_itself(const std::string& path);

  const pytorch::JoinedHistory& history() const { return history_; }
  std::span<const pytorch::TakenSnapshot> taken() const { return taken_; }
  // A step's entry, to change in place (fit resizes the requests).
  pytorch::SnapshotEntry& entry(const pytorch::HistoryStep& step) {
    return loaded_[step.snapshot].snapshot.device_traces[static_cast<size_t>(step.device)][step.entry];
  }
  // The device whose history has the most entries.
  int32_t busiest_device() const;
  // The devices whose history has entries, in order.
  std::vector<int32_t> devices() const;
  // PYTORCH_CUDA_ALLOC_CONF as recorded; empty when no snapshot has its allocator_settings.
  const std::string& alloc_conf() const { return alloc_conf_; }
  // The settings the snapshots recorded, over `base` (the memory fraction and the device are not recorded).
  allocator_model::Settings recorded_settings(const allocator_model::Settings& base) const;

  allocator_model::HistoryReplay replay(int32_t device, const allocator_model::Settings& settings,
                                        const allocator_model::HistoryReplayOptions& options = {}) const {
    return allocator_model::replay_history(taken_, history_, device, settings, options);
  }
  // When `entry` happened on the trace's clock; nullopt when it is not in the history.
  std::optional<uint64_t> time_of(const pytorch::SnapshotEntry* entry) const;
  // A request's stack as people read it (stack_text.h): the program's own frames first, innermost first;
  // empty when not recorded.
  std::vector<std::string> stack_of(const pytorch::SnapshotEntry* entry) const;

 private:
  std::vector<sources::join::LoadedSnapshot> loaded_;
  std::vector<pytorch::TakenSnapshot> taken_;
  pytorch::JoinedHistory history_;
  std::string alloc_conf_;
};

}  // namespace gpumemtrace::report
