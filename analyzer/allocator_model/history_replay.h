// A recorded PyTorch history (the joined snapshots of one process: sources/pytorch/joined_history.h) replayed
// through the allocator model, and what the model asked of the device compared with what PyTorch's allocator
// did: its segment_alloc/segment_free (or segment_map/segment_unmap) entries, in order and by size.
//
// The replay feeds the model the history's requests: each alloc (its requested size and stream), each
// free_requested, freed at once when free_completed follows it directly, else later, when its free_completed
// comes (record_stream), and each oom entry's request again. The history does not record empty_cache calls: a
// release of cached segments between two requests that the model's next malloc would not make itself is taken
// for one. A new segment takes the address of the recorded one of the same size in the same malloc, so that ties
// between blocks of one size are broken as they were.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analyzer/allocator_model/allocator.h"
#include "analyzer/sources/pytorch/joined_history.h"

namespace gpumemtrace::allocator_model {

struct HistoryReplay {
  std::vector<SegmentEvent> recorded;  // the history's segment entries, in order (request: the next alloc's)
  std::vector<SegmentEvent> modelled;  // the model's
  // The first index at which the two differ in kind, size or stream (or one of them ends); nullopt: the same.
  std::optional<size_t> first_difference;
  uint64_t requests = 0;                       // allocs and ooms replayed
  uint64_t empty_caches = 0;                   // empty_cache calls inferred from the history (or given)
  std::vector<size_t> empty_cache_entries;     // where: the device's entries (from 0) each was made before
  std::vector<uint64_t> recorded_out_of_memory;  // requests (counted from 0) that failed in the history
  uint64_t recorded_peak_reserved = 0;           // from the recorded segment entries
  Counters counters;                             // the model's
  uint64_t peak_fragmentation = 0;  // the model's largest reserved - allocated
  // The worst moment: the first request that ran out of memory in the model, else the peak of fragmentation;
  // the largest cached block then.
  uint64_t largest_free_at_worst = 0;
  const pytorch::SnapshotEntry* first_out_of_memory = nullptr;  // the model's first failed request (its entry)
  uint64_t unknown_frees = 0;  // frees of blocks the replay did not hand out (allocated before the history)
  bool initial_state_empty = true;  // false: the history began with segments the model did not start with
};

struct HistoryReplayOptions {
  std::optional<uint64_t> last_request;  // stop after this request (counted from 0); none: replay every entry
  // The empty_cache calls of a replay under the recorded settings (its empty_cache_entries), made at the same
  // entries instead of inferred: whether a malloc would release segments itself depends on the settings, the
  // program's calls do not.
  std::optional<std::vector<size_t>> empty_caches;
};

// Replays `device`'s entries of `history` under `settings`. The model starts empty: a history that begins with
// segments (recording turned on after the first allocation) says so in initial_state_empty.
HistoryReplay replay_history(std::span<const pytorch::TakenSnapshot> snapshots, const pytorch::JoinedHistory& history,
                             int32_t device, const Settings& settings, const HistoryReplayOptions& options = {});

// The entries themselves, replayed the same way: requests (alloc, free, free_requested, free_completed, oom) and
// segment entries to compare with, in order. A program's own sub-allocator's blocks, made into alloc and free entries,
// are replayed so (report/heap_requests.h).
HistoryReplay replay_entries(std::span<const pytorch::SnapshotEntry* const> entries, const Settings& settings,
                             const HistoryReplayOptions& options = {});

// `device`'s first oom entry at `time_ns` or later on the trace's clock, within `slack_ns`: the one PyTorch recorded
// for an out-of-memory failure at that moment, with its request (counted from 0, as the replay counts them).
struct OomRequest {
  uint64_t request = 0;
  const pytorch::SnapshotEntry* entry = nullptr;
};
std::optional<OomRequest> oom_request_at(std::span<const pytorch::TakenSnapshot> snapshots,
                                       const pytorch::JoinedHistory& history, int32_t device, uint64_t time_ns,
                                       uint64_t slack_ns);

// "segment_alloc 20971520 B on stream 0" for a message.
std::string describe(const SegmentEvent& event);

}  // namespace gpumemtrace::allocator_model
