// The steps of join_snapshots (snapshot_join.h), in the order it takes them; declared here for their tests.
//   load_snapshots      the snapshot files the trace names, read (those that cannot be, said why)
//   open_segments       a dry run of the history: the segments it opens and closes, the state changes
//   read_trace          a reading of the trace: what may be the segments, where each step's time falls, the
//                       out-of-memory failures
//   match_segments      each segment to the trace's memory at its address, or left out
//   match_ooms          each oom entry to the trace's out-of-memory failure of the device
//   place_steps         where each step goes among the trace's records, and when
//   write_history       the kept segments' history as heap records at their places
//   count_other_memory  the trace's device memory that is no segment of the history
//   describe_snapshots  what each snapshot brought
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/pytorch/pickle_reader.h"
#include "analyzer/pytorch/snapshot.h"
#include "analyzer/sources/pytorch/history_writer.h"
#include "analyzer/sources/pytorch/joined_history.h"
#include "analyzer/sources/snapshot_join.h"
#include "trace/reader/mapped_file.h"

namespace gpumemtrace::sources::join {

// A snapshot file read, with what its values point into.
struct LoadedSnapshot {
  NamedSnapshot named;
  std::unique_ptr<trace::MappedFile> file;
  std::unique_ptr<pytorch::SnapshotReader> reader;
  pytorch::Snapshot snapshot;
};

// The snapshots beside the trace at `trace_path`; "FILE: why" into `unreadable` for each that cannot be read.
std::vector<LoadedSnapshot> load_snapshots(const std::string& trace_path, std::span<const NamedSnapshot> named,
                                           std::vector<std::string>& unreadable);

// A segment of the history as a dry run of the writer opened and closed it.
struct Instance {
  pytorch::OpenedSegment opened;
  size_t step = 0;  // the step that opened it
  uint64_t closed_ns = UINT64_MAX;
};

// Takes a step of the history into a writer; returns the state changes of a State step (else 0).
uint64_t take_step(pytorch::HistoryWriter& writer, const pytorch::JoinedHistory& history,
                   std::span<const pytorch::TakenSnapshot> taken, const pytorch::HistoryStep& step, uint64_t time_ns,
                   pytorch::HistoryInconsistencies& bad);

struct OpenedSegments {
  std::vector<Instance> instances;      // in the order they were opened
  std::vector<uint64_t> state_changes;  // by snapshot: JoinedSnapshot::state_changes
};

OpenedSegments open_segments(const pytorch::JoinedHistory& history, std::span<const pytorch::TakenSnapshot> taken);

// An allocation or mapping of the trace that may be a segment, from one of its records to another.
struct Lifetime {
  int32_t device = trace::kNoDevice;
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t handle = 0;     // a mapping: the VMM physical allocation mapped
  uint64_t begin_record = 0;  // the trace's records up to its allocation (or mapping), that one included
  uint64_t begin_ns = 0;
  uint64_t end_ns = UINT64_MAX;  // its free (or unmapping); never freed: UINT64_MAX
  bool mapping = false;
  bool joined = false;

  bool meets(uint64_t from_ns, uint64_t to_ns) const { return begin_ns <= to_ns && end_ns >= from_ns; }
  uint64_t overlap(uint64_t from_ns, uint64_t to_ns) const {
    uint64_t from = std::max(from_ns, begin_ns), to = std::min(to_ns, end_ns);
    return to > from ? to - from : 0;
  }
};

struct Failure {
  int32_t device = trace::kNoDevice;
  uint64_t record = 0;  // the trace's records up to it, it included
  uint64_t time_ns = 0;
};

// What a reading of the trace tells the join: the allocations and mappings that may be the history's segments,
// where each step's time falls among the trace's records, the out-of-memory failures.
struct TraceFacts {
  std::vector<Lifetime> lifetimes;
  std::vector<uint64_t> step_records;  // by step: the trace's records up to the last event not after the step
  std::vector<Failure> failures;
  uint64_t max_heap = 0;
  uint64_t device_allocations = 0;  // the trace's device memory allocations (VMM physical ones too), and bytes
  uint64_t device_bytes = 0;
  struct Physical {
    int32_t device = trace::kNoDevice;
    uint64_t size = 0;
  };
  std::unordered_map<uint64_t, Physical> vmm;  // the VMM physical allocations, by handle
};

// The first `limit` records of the trace at `path`.
TraceFacts read_trace(const std::string& path, uint64_t limit, std::span<const Instance> instances,
                      std::span<const pytorch::HistoryStep> steps);

struct SegmentMatch {
  std::vector<bool> kept;                        // by instance: joined to the trace's memory
  std::vector<std::optional<size_t>> opens_after;  // a kept segment: the lifetime whose record it goes after
};

// Each segment to the allocation of its address and size whose life overlaps the segment's most, or (an
// expandable one) the mappings that cover it then; marks those lifetimes joined. Counts into `info` the
// segments joined and left out, and whether mapped ones say expandable segments were on.
SegmentMatch match_segments(std::span<const Instance> instances, TraceFacts& facts, JoinInfo& info);

// By step: an oom entry's out-of-memory failure (an index of facts.failures): the device's last since the
// entry before it, within the clocks' slack. Counts into `info` the entries with none.
std::vector<std::optional<size_t>> match_ooms(std::span<const pytorch::HistoryStep> steps,
                                              std::span<const pytorch::TakenSnapshot> taken,
                                              std::span<const Failure> failures, JoinInfo& info);

struct Placement {
  std::vector<uint64_t> position;  // by step: how many of the trace's records go before it
  std::vector<uint64_t> time_ns;   // by step: its time on the trace's clock
};

// After the trace's records before its time, the allocations of the segments it opens and the steps before
// it; before an oom entry's failure if it comes before the entry.
Placement place_steps(std::span<const pytorch::HistoryStep> steps, std::span<const Instance> instances,
                      const SegmentMatch& match, const TraceFacts& facts,
                      std::span<const std::optional<size_t>> failure_of);

// The history of the kept segments as heap records (heap numbers after the trace's), at their places.
void write_history(const pytorch::JoinedHistory& history, std::span<const pytorch::TakenSnapshot> taken,
                   const SegmentMatch& match, const Placement& placement, uint64_t first_heap, SnapshotJoin& out);

// info.other_allocations and other_bytes: the trace's device memory not joined to a segment (a VMM physical
// allocation counted once, however many of its mappings were joined).
void count_other_memory(const TraceFacts& facts, JoinInfo& info);

// info.snapshots, history_begins_ns and expandable_segments from the snapshots read.
void describe_snapshots(std::span<const LoadedSnapshot> loaded, const pytorch::JoinedHistory& history,
                        std::span<const uint64_t> state_changes, JoinInfo& info);

}  // namespace gpumemtrace::sources::join
