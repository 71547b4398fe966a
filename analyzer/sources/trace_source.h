// What a path holds, opened to be read as a trace: one of our trace files (read through a mapping), or a
// PyTorch memory snapshot (torch.cuda.memory._dump_snapshot()) made into a trace in memory
// (pytorch/snapshot_trace.h). Told apart by their first bytes (a pickle starts with PROTO 2 or later),
// never by the file's name, so every command that reads a trace reads a snapshot too. A trace may then be
// joined with the PyTorch snapshots its records name (snapshot_join.h): its records come with theirs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/progress_fn.h"
#include "analyzer/sources/pytorch/snapshot_trace.h"
#include "analyzer/sources/snapshot_join.h"
#include "analyzer/sources/source_records.h"
#include "trace/reader/reader.h"
#include "trace/reader/opened_trace.h"

namespace gpumemtrace::sources {

class TraceSource {
 public:
  // Throws trace::OpenError: unreadable, not a trace, or a snapshot that cannot be read (a pickle that is
  // not plain data, or plain data that is not a snapshot). A snapshot's reading and conversion tell `progress`.
  explicit TraceSource(const std::string& path, const ProgressFn& progress = {});
  // Whether the path holds a snapshot, told by its first bytes as the constructor tells it, without reading
  // the rest (a snapshot of a GB takes seconds to make into a trace). Throws trace::OpenError when unreadable.
  static bool holds_snapshot(const std::string& path);

  // How a reading takes a packed trace: once it is unpacked whole, or as it is unpacked (the first reading of
  // a report, which then replays on one processor while the other unpacks, and dump, which prints from the
  // first records on; trace::OpenedTrace).
  enum class Unpacked { Whole, AsItComes };
  // A reader from the start of the trace, of its own records only; it may outlive the source.
  std::shared_ptr<trace::Reader> reader(Unpacked unpacked = Unpacked::Whole) const;
  // The records from the start, the trace's first `limit` and the joined ones among them; the source must
  // outlive them.
  SourceRecords records(uint64_t limit = UINT64_MAX, Unpacked unpacked = Unpacked::Whole) const;
  // What the snapshot held, when the path is one.
  const std::optional<pytorch::SnapshotInfo>& snapshot() const { return snapshot_; }

  // The trace's records come with the joined ones from now on.
  void join(SnapshotJoin join) { join_ = std::move(join); }
  const std::optional<SnapshotJoin>& joined() const { return join_; }

 private:
  // The trace: a trace file opened (a packed one unpacked) once, or the trace a snapshot was made into.
  std::shared_ptr<const trace::OpenedTrace> file_;
  std::optional<pytorch::SnapshotInfo> snapshot_;
  std::optional<SnapshotJoin> join_;
};

}  // namespace gpumemtrace::sources
