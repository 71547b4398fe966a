// An export of a whole trace (`gpumemtrace export`): told of every allocation while the trace is read, if it
// needs them, then it writes its output from the replay into an ExportSink.
#pragma once

#include <cstdint>
#include <string>

#include "analyzer/export/export_sink.h"
#include "analyzer/replay/allocation_listener.h"
#include "analyzer/report/stacks.h"
#include "analyzer/report/weights_model.h"
#include "analyzer/analysis/analysis.h"

namespace gpumemtrace::render {

// memory-viz: the part of the history written, as PyTorch's ring buffer would have kept it: the entries from
// --from to --to, at most the last max_entries of each device; the segments are the state at --to.
struct HistoryWindow {
  uint64_t from_ns = 0;
  uint64_t to_ns = UINT64_MAX;
  uint64_t max_entries = UINT64_MAX;
  std::string from_text, to_text;  // as given, for the message that says what was left out
  bool whole() const { return from_ns == 0 && to_ns == UINT64_MAX && max_entries == UINT64_MAX; }
};

struct ExportOptions {
  report::Weighing what = report::Weighing::Peak;  // folded and pprof: --what
  bool all_frames = false;                          // folded: --all-frames
  HistoryWindow history;                            // memory-viz: --from, --to, --max-entries
};

class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual replay::AllocationListener* listener() { return nullptr; }
  // The trace has been read (with the selection applied): write the output.
  virtual void finish(const analysis::Analysis& analysis, report::SymbolizeStack symbolize) = 0;
  // After finish: what the output left out of the trace, one line for stderr; empty: nothing to say.
  virtual std::string left_out() const { return {}; }
};

}  // namespace gpumemtrace::render
