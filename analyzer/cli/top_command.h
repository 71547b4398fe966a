// gpumemtrace top: a live view of a traced process (or of a trace file as it is written), redrawn every
// interval until q, Ctrl-C or the process's exit. `run --top` shows it on the program it runs.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "analyzer/report/model_input.h"

namespace gpumemtrace::cli {

struct TopOptions {
  std::chrono::milliseconds interval{1000};
  report::Selection selection;  // --top, --device: summary's defaults, so the figures are summary's
  bool all_frames = false;
};

inline report::Selection top_selection() {
  report::Selection selection;
  selection.top = 5;  // summary's --top
  return selection;
}

// The live view of `run --top`'s child: waits for the tracer to load and the trace to appear, and returns when
// the child ends (its last frame stays on stdout) or q is pressed. Ctrl-C reaches the child, not this view.
// `written_trace` finds the trace of a child that ended before the view saw it in /proc.
void top_of_child(long pid, const TopOptions& options,
                  const std::function<std::optional<std::string>()>& written_trace);

}  // namespace gpumemtrace::cli
