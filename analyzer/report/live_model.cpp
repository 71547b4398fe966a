#include "analyzer/report/live_model.h"

#include <algorithm>

namespace gpumemtrace::report {

LiveModel live_model(ModelInput& input) {
  const replay::Replay& replay = input.reserved_replay();
  LiveModel model;
  model.time_ns = replay.end_time_ns();
  const replay::PhaseInstance* innermost = nullptr;
  const replay::PhaseInstance* latest_step = nullptr;
  const replay::PhaseInstance* last_ended = nullptr;
  std::optional<replay::PathId> step_path;
  if (const std::optional<replay::PhaseWindowsPlan>& plan = input.growth_windows().phase) {
    step_path = plan->path;
    model.step_phase = input.growth_windows().phase_path;
  }
  for (const replay::PhaseInstance& instance : replay.phase_instances().instances()) {
    if (instance.open && (!innermost || instance.start_ns >= innermost->start_ns)) innermost = &instance;
    if (step_path && instance.path == *step_path) {
      latest_step = &instance;
      if (!instance.open) last_ended = &instance;
    }
  }
  if (innermost) model.phase = replay.phases().path_text(innermost->path);
  if (latest_step) model.step = instance_figures(input, *latest_step);
  if (last_ended) model.last_ended = instance_figures(input, *last_ended);

  const replay::DeviceFacts& facts = replay.device_facts();
  model.nvml = facts.at_end().empty() ? facts.at_start() : facts.at_end();
  for (replay::NvmlDevice& device : model.nvml)
    std::erase_if(device.processes, [&](const replay::NvmlProcess& process) { return process.pid == input.trace().pid; });
  return model;
}

LiveView live_view(const analysis::Analysis& analysis, const Selection& selection, SymbolizeStack symbolize) {
  LiveView view;
  view.summary = build_report(analysis, selection, symbolize, build_body<summary_report>);
  ModelInput input(analysis, selection, std::move(symbolize), view.summary.stacks);  // the same stacks: no second reading
  view.live = live_model(input);
  view.ended = analysis.trace.complete;
  return view;
}

}  // namespace gpumemtrace::report
