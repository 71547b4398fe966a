#include "analyzer/report/trace_header.h"

#include <algorithm>

namespace gpumemtrace::report {

TraceHeader trace_header(const analysis::Analysis& analysis) {
  const replay::Replay& replay = *analysis.replay;
  TraceHeader header;
  header.path = analysis.trace.path;
  header.pid = analysis.trace.pid;
  header.command = analysis.trace.command;
  header.params = analysis.trace.params;
  header.complete = analysis.trace.complete;
  header.events = analysis.trace.events;
  header.end_ns = replay.end_time_ns();
  header.span_ns = replay.end_time_ns() - std::min(replay.end_time_ns(), replay.first_event_ns());
  header.inconsistencies = replay.inconsistencies();
  header.snapshot = analysis.trace.snapshot;
  header.joined = analysis.trace.joined;
  return header;
}

}  // namespace gpumemtrace::report
