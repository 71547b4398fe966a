// A trace joined with the PyTorch snapshots that its tracer's hook wrote beside it (the TorchSnapshot records:
// docs/trace-format.md, "PyTorch snapshots"; docs/reports.md, "PyTorch snapshots joined to a trace"). The
// allocator's history in them (pytorch/joined_history.h) becomes heap records (pytorch/history_writer.h: a heap
// over each segment, PyTorch's blocks in it with their stacks) among the trace's own records, so that every
// report sees the blocks in the segments the trace allocated.
//
// A segment of the history is the trace's own memory at its address: the device allocation of the same size
// there (a cudaMalloc), or the VMM ranges mapped over it (expandable segments), whose life overlaps the
// segment's, within kClockSlackNs. A segment the trace does not have is left out with its blocks, counted.
// Each step of the history goes before the first record of the trace that is later than it, never before the
// allocation of a segment it opens nor before a step earlier in the history. An oom entry is the trace's last
// out-of-memory failure of the device before it: the steps before the entry go before that failure, the steps
// after it after, so the heaps at the failure are PyTorch's as it failed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analyzer/sources/pytorch/joined_history.h"
#include "gpumemtrace/trace_records.h"

namespace gpumemtrace::sources {

// How far apart the trace's clock and the snapshots' may put one moment: the wall clock and the trace's are read
// one after the other when a snapshot is taken, and PyTorch's times are in whole µs.
inline constexpr uint64_t kClockSlackNs = 1'000'000;

// A TorchSnapshot record of the trace, kept.
struct NamedSnapshot {
  std::string file;  // in the trace's directory
  uint64_t reason = 0;  // format::TorchSnapshotReason
  uint64_t sequence = 0;
  uint64_t taken_ns = 0;
  uint64_t taken_wall_ns = 0;

  static NamedSnapshot of(const trace::TorchSnapshot& record);
  // "exit", "oom", "usr1" (format::kTorchSnapshotReasonNames), "unknown".
  std::string_view reason_name() const;
};

struct JoinedSnapshot {
  NamedSnapshot named;
  pytorch::SnapshotPart part;
  uint64_t state_changes = 0;  // where its new entries begin, the segments and blocks that the history before
                               // had otherwise: events lost between the two ring buffers
};

struct JoinInfo {
  std::vector<JoinedSnapshot> snapshots;  // read and joined, in the order they were taken
  std::vector<std::string> unreadable;    // "FILE: why", for each snapshot that could not be read
  uint64_t events = 0;                    // the history's entries joined, each once
  std::optional<uint64_t> history_begins_ns;  // where the history begins, on the trace's clock
  uint64_t segments = 0;                  // the history's segments joined to the trace's memory
  uint64_t missing_segments = 0;          // the history's segments the trace does not have: left out
  uint64_t missing_segment_bytes = 0;
  uint64_t left_out_blocks = 0;           // blocks allocated in them, left out with them
  uint64_t other_allocations = 0;         // the trace's device allocations that are no segment of the history
  uint64_t other_bytes = 0;
  uint64_t unmatched_ooms = 0;            // oom entries with no out-of-memory failure of the trace near them
  std::optional<bool> expandable_segments;  // allocator_settings, or segments of mapped VMM ranges
  pytorch::HistoryInconsistencies inconsistencies;
};

struct SnapshotJoin {
  std::vector<uint8_t> records;     // a trace (trace_format.h) of the heap records, in order
  std::vector<uint64_t> positions;  // by event record of `records`: how many of the trace's records go before it
  JoinInfo info;
};

// Joins the trace at `trace_path` (its first `trace_records` records: what the analysis read) with the
// snapshots its records name. A snapshot that cannot be read is left out and said (info.unreadable).
SnapshotJoin join_snapshots(const std::string& trace_path, std::span<const NamedSnapshot> named,
                            uint64_t trace_records);

}  // namespace gpumemtrace::sources
