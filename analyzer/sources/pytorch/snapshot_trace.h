// A PyTorch memory snapshot made into a trace, so that every report reads it as it reads our own traces
// (docs/reports.md, "PyTorch snapshots"): each segment a device allocation (cudaMalloc) with a heap over it,
// each active block a sub-allocation in it, inactive blocks the heaps' free gaps, an oom entry a failed
// cudaMalloc (history_writer.h). The trace entries (device_traces) are a ring buffer of the last events:
// their history is undone from the state at the dump, newest first, as PyTorch's MemoryViz.js does, to find
// the state when recording began; the trace holds that state at its time 0, then the entries forward in time
// from 1 µs (time_us: the wall clock since the first entry, else one µs apart).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/progress_fn.h"
#include "trace/reader/opened_trace.h"

namespace gpumemtrace::pytorch {

// Entries that do not fit the state they are undone from, counted and skipped.
struct HistoryInconsistencies {
  uint64_t missing_blocks = 0;    // an alloc or free_requested of a block the state after it does not have
  uint64_t duplicate_blocks = 0;  // a free_completed of a block the state after it still has
  uint64_t missing_segments = 0;  // a segment_alloc or segment_map of memory the state after it does not have
  uint64_t orphan_blocks = 0;     // a block in no segment: left out

  uint64_t total() const { return missing_blocks + duplicate_blocks + missing_segments + orphan_blocks; }
};

struct SnapshotInfo {
  bool legacy = false;   // a bare list of segments, or blocks with "history"
  uint64_t segments = 0;  // when the snapshot was taken
  uint64_t blocks = 0;    // of every state, when the snapshot was taken
  uint64_t history_entries = 0;  // trace entries about memory (not "snapshot" markers), all devices
  bool history_timed = false;    // they have their wall-clock time (time_us)
  uint64_t history_start_wall_ns = 0;  // the first entry's time: where recording began (0: not timed)
  uint64_t history_end_wall_ns = 0;    // the last entry's
  uint64_t trace_start_wall_ns = 0;    // the trace's time 0, when it has the state then: 1 µs before the first entry
  uint64_t unknown_actions = 0;        // entries of an action this reader does not know (skipped)
  std::optional<bool> expandable_segments;  // allocator_settings' expandable_segments, when the snapshot has them
  HistoryInconsistencies inconsistencies;
};

struct SnapshotTrace {
  // A trace (trace_format.h), without End: it stops when the snapshot was taken. It is held in a memory file,
  // not in this process's memory, and each reading maps it: a history of millions of entries makes a trace of
  // hundreds of MiB.
  std::shared_ptr<const trace::OpenedTrace> trace;
  SnapshotInfo info;
};

// Throws PickleError (not plain data), SnapshotError (not a snapshot), std::system_error (no memory file).
// `read_to`: SnapshotReader's (the pickle's pages behind it may go). `progress` is told how many of the
// history's entries are converted ("converting").
SnapshotTrace snapshot_trace(std::span<const uint8_t> pickle, std::function<void(uint64_t offset)> read_to = {},
                             const ProgressFn& progress = {});

}  // namespace gpumemtrace::pytorch
