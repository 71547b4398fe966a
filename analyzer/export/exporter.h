// An export of a whole trace (`gpumemtrace export`): told of every allocation while the trace is read, if it
// needs them, then it writes its output from the replay into an ExportSink.
#pragma once

#include <cstdint>

#include "analyzer/export/export_sink.h"
#include "analyzer/replay/allocation_listener.h"
#include "analyzer/report/stacks.h"
#include "analyzer/report/weights_model.h"
#include "analyzer/analysis/analysis.h"

namespace gpumemtrace::render {

struct ExportOptions {
  report::Weighing what = report::Weighing::Peak;  // folded and pprof: --what
  bool all_frames = false;                          // folded: --all-frames
};

class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual replay::AllocationListener* listener() { return nullptr; }
  // The trace has been read (with the selection applied): write the output.
  virtual void finish(const analysis::Analysis& analysis, report::SymbolizeStack symbolize) = 0;
};

}  // namespace gpumemtrace::render
