// What a path holds, opened to be read as a trace: one of our trace files (read through a mapping), or a
// PyTorch memory snapshot (torch.cuda.memory._dump_snapshot()) made into a trace in memory
// (pytorch/snapshot_trace.h). Told apart by their first bytes (a pickle starts with PROTO 2 or later),
// never by the file's name, so every command that reads a trace reads a snapshot too.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/sources/pytorch/snapshot_trace.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::report {

class TraceSource {
 public:
  // Throws trace::OpenError: unreadable, not a trace, or a snapshot that cannot be read (a pickle that is
  // not plain data, or plain data that is not a snapshot).
  explicit TraceSource(const std::string& path);

  // A reader from the start of the trace; it may outlive the source.
  std::shared_ptr<trace::Reader> reader() const;
  // What the snapshot held, when the path is one.
  const std::optional<pytorch::SnapshotInfo>& snapshot() const { return snapshot_; }

 private:
  std::string path_;
  std::shared_ptr<const std::vector<uint8_t>> converted_;  // the snapshot's trace
  std::optional<pytorch::SnapshotInfo> snapshot_;
};

}  // namespace gpumemtrace::report
