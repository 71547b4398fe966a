// What `gpumemtrace top` shows of a trace still being written beyond its summary (docs/top.md): the phase
// open now, the step the program is in and what the last ended step left live, and the other processes NVML
// saw on the devices. The summary's own figures (live and peak per device, PyTorch's reserved and allocated
// bytes as the two views, the stacks holding the most, the forecast) are its SummaryReport's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/replay/device_facts.h"
#include "analyzer/report/model_input.h"
#include "analyzer/report/phases_model.h"
#include "analyzer/report/report.h"

namespace gpumemtrace::report {

struct LiveModel {
  uint64_t time_ns = 0;               // the last event read, from the trace's start
  std::optional<std::string> phase;   // the phase open now: the innermost (the last begun of those still open)
  std::optional<std::string> step_phase;        // the phase whose instances are the steps (the forecast's)
  std::optional<PhaseInstanceFigures> step;       // the latest step, running or ended
  std::optional<PhaseInstanceFigures> last_ended;  // the last step that ended, with what it left live
  // The devices as NVML last showed them (the trace's latest DeviceState records), each with the processes
  // other than this one; empty when the trace has none.
  std::vector<replay::NvmlDevice> nvml;
};

LiveModel live_model(ModelInput& input);

// One frame of `top`: the summary of the trace so far and the live model, with the process's state.
struct LiveView {
  Report summary;  // its body is a SummaryReport
  LiveModel live;
  std::optional<uint64_t> pid;  // attached to this process (else to a trace file)
  bool ended = false;           // the process has exited (a file: its trace is complete)
};

// Throws SelectionError (model_input.h).
LiveView live_view(const analysis::Analysis& analysis, const Selection& selection, SymbolizeStack symbolize);

}  // namespace gpumemtrace::report
