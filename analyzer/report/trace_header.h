// What every report says first: which trace (or PyTorch snapshot), whether it is complete, which PyTorch
// snapshots were joined to it, where a snapshot's history begins, and what did not add up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/replay/replay.h"
#include "analyzer/analysis/analysis.h"

namespace gpumemtrace::report {

struct TraceHeader {
  std::string path;
  uint64_t pid = 0;      // 0: the trace has no process record
  std::string command;   // argv joined by spaces
  std::vector<RunParam> params;  // the run's named parameters (gpumemtrace run --param)
  bool complete = false;
  uint64_t events = 0;
  uint64_t end_ns = 0;   // when the trace ends
  uint64_t span_ns = 0;  // from the first allocation to the end
  replay::Inconsistencies inconsistencies;
  std::optional<pytorch::SnapshotInfo> snapshot;  // the trace is a PyTorch memory snapshot's
  std::optional<sources::JoinInfo> joined;  // the PyTorch snapshots the trace names, joined to it
};

TraceHeader trace_header(const analysis::Analysis& analysis);

}  // namespace gpumemtrace::report
