// The caching allocator's state on one device as a snapshot's trace entries change it, and the undoing of
// those entries: the trace is a ring buffer of the last events, so the state when recording began is the
// state at the dump with every entry undone, newest first (what MemoryViz.js does to draw a past moment):
//   alloc           the block was not there before       free_requested  the block was not pending before
//   free_completed  the block was there, pending         free            the block was there
//   segment_alloc   the segment was not there            segment_free    the segment was there
//   segment_map     the range was not mapped             segment_unmap   the range was mapped
// (map and unmap are expandable segments: a range joins or leaves its neighbours of the same stream).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "analyzer/pytorch/snapshot.h"
#include "analyzer/sources/pytorch/snapshot_trace.h"

namespace gpumemtrace::pytorch {

struct HistoryBlock {
  uint64_t size = 0;       // the block's bytes; 0: not known (an entry says only what was requested)
  uint64_t requested = 0;  // the bytes asked for
  FramesId frames = kNoFrames;
  std::string_view user_metadata;
  bool pending = false;  // freed by the program, not yet by the allocator (active_pending_free)
};

struct HistorySegment {
  uint64_t size = 0;
  uint64_t stream = 0;
  bool large_pool = true;
  bool expandable = false;
  FramesId frames = kNoFrames;

  // The segment (or mapped range) a segment_* entry names.
  static HistorySegment of(const SnapshotEntry& entry);
};

struct DeviceState {
  std::map<uint64_t, HistorySegment> segments;  // by address
  std::map<uint64_t, HistoryBlock> blocks;      // the active blocks, by address

  // The segment that holds `address`, or segments.end().
  std::map<uint64_t, HistorySegment>::iterator segment_at(uint64_t address);
  // An expandable segment's range is mapped: it joins the segments beside it of the same stream.
  void map(uint64_t address, HistorySegment range);
  // The range is unmapped from the segment that holds it, which shrinks or splits. False: no segment holds it.
  bool unmap(uint64_t address, uint64_t size);
};

// The state of `device` when the snapshot was taken. A segment without frames takes its first block's.
DeviceState dump_state(const Snapshot& snapshot, int32_t device);

// Undoes `entries` (oldest first) from `state`, newest first: `state` becomes the state before the first.
// Returns, per entry, the size of the block an alloc made when the later state knew it (else 0).
std::vector<uint64_t> undo_entries(DeviceState& state, std::span<const SnapshotEntry> entries,
                                   HistoryInconsistencies& bad);

}  // namespace gpumemtrace::pytorch
