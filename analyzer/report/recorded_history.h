// The PyTorch history a run recorded: the snapshots a trace names (or a snapshot itself) read and joined, for the
// allocator model to replay (allocator_model/history_replay.h). Shared by whatif (whatif_model.h) and the what-if
// of an out-of-memory failure (oom_whatif.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/allocator_model/history_replay.h"
#include "analyzer/allocator_model/settings.h"
#include "analyzer/sources/snapshot_join_steps.h"

namespace gpumemtrace::report {

// Why a path cannot be replayed: no PyTorch history in it or beside it, or its snapshots unreadable.
class WhatifError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RecordedHistory {
 public:
  // The snapshots `named` beside the trace at `trace_path`. Throws WhatifError when none can be read.
  RecordedHistory(const std::string& trace_path, std::span<const sources::NamedSnapshot> named);
  // A PyTorch snapshot file read as the whole history.
  static std::vector<sources::NamedSnapshot> snapshot_itself(const std::string& path);

  const pytorch::JoinedHistory& history() const { return history_; }
  std::span<const pytorch::TakenSnapshot> taken() const { return taken_; }
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
  // A request's stack, innermost first, "function (file:line)"; empty when not recorded.
  std::vector<std::string> stack_of(const pytorch::SnapshotEntry* entry) const;

 private:
  std::vector<sources::join::LoadedSnapshot> loaded_;
  std::vector<pytorch::TakenSnapshot> taken_;
  pytorch::JoinedHistory history_;
  std::string alloc_conf_;
};

}  // namespace gpumemtrace::report
