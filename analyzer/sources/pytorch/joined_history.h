// The history of one process's caching allocator from the snapshots its trace names (at out of memory, on
// SIGUSR1, at exit: analyzer/sources/snapshot_join.h), each event once, on the trace's clock.
//
// Each snapshot's ring buffer holds the last events before it was taken, and a later snapshot's usually holds
// much of an earlier one's. A snapshot's entries that the history already has are the run at the beginning of
// its ring buffer that repeats the history's end (the longest such run; entries are compared by action,
// address, size, stream, time and free bytes): the history goes on with the entries after it. Where they
// begin, the allocator's state is the snapshot's state at its dump with them undone (snapshot_history.h): the
// history begins with that state at the first snapshot, and is set to it at each later one, which changes
// nothing when no event was lost between the two ring buffers.
//
// An entry's time on the trace's clock is its time_us (the wall clock) with the clocks' difference when its
// snapshot was taken (the TorchSnapshot record has both), never earlier than the entry before it on its
// device. A snapshot whose entries lack time_us brings only its state, at the moment it was taken.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "analyzer/pytorch/snapshot.h"
#include "analyzer/sources/pytorch/snapshot_history.h"

namespace gpumemtrace::pytorch {

struct TakenSnapshot {
  const Snapshot* snapshot = nullptr;
  SnapshotReader* frames = nullptr;  // its frames
  uint64_t taken_ns = 0;             // when it was taken, on the trace's clock
  uint64_t taken_wall_ns = 0;        // the same moment on the wall clock
};

struct HistoryStep {
  enum class Kind : uint8_t { State, Entry };
  Kind kind = Kind::Entry;
  int32_t device = 0;
  uint32_t snapshot = 0;  // the TakenSnapshot it comes from
  size_t entry = 0;       // Entry: its index in that snapshot's trace of the device
  uint64_t reserved = 0;  // Entry: the size of the block an alloc made, when known
  size_t state = 0;       // State: the state the device is set to (JoinedHistory::states)
  uint64_t time_ns = 0;   // on the trace's clock

  const SnapshotEntry& entry_of(std::span<const TakenSnapshot> snapshots) const {
    return snapshots[snapshot].snapshot->device_traces[static_cast<size_t>(device)][entry];
  }
};

// What one snapshot brought to the history.
struct SnapshotPart {
  uint64_t entries = 0;   // the memory entries of its ring buffer (not its "snapshot" markers)
  uint64_t repeated = 0;  // of them, those the history already had from an earlier snapshot
  uint64_t untimed = 0;   // of them, those left out: without time_us they have no place on the trace's clock
  std::optional<uint64_t> begins_ns;  // where its ring buffer begins (its first entry), on the trace's clock
};

struct JoinedHistory {
  std::vector<DeviceState> states;
  std::vector<HistoryStep> steps;  // in time order (and in order on each device)
  std::vector<SnapshotPart> parts;  // by snapshot
  HistoryInconsistencies inconsistencies;
};

// The snapshots in the order they were taken.
JoinedHistory join_histories(std::span<const TakenSnapshot> snapshots);

// How many entries at the beginning of `later` are already at the end of `history`: the largest k such that
// later[0, k) ends with the last min(k, history.size()) entries of `history` (SnapshotEntry::same_event and
// same_time). Linear in both sizes, but for runs that are alike at times too far apart.
size_t repeated_entries(std::span<const SnapshotEntry* const> history, std::span<const SnapshotEntry> later);

}  // namespace gpumemtrace::pytorch
