#include "analyzer/report/phases_model.h"

#include <map>

namespace gpumemtrace::report {

PhasesModel phases_model(ModelInput& input) {
  const replay::Replay& replay = input.reserved_replay();
  PhasesModel model;
  std::map<replay::PathId, size_t> index;  // path → its place in model.phases
  for (const replay::PhaseInstance& instance : replay.phase_instances().instances()) {
    auto [it, added] = index.try_emplace(instance.path, model.phases.size());
    if (added) model.phases.push_back({replay.phases().path_text(instance.path), {}});
    PhaseFigures& phase = model.phases[it->second];
    PhaseInstanceFigures f;
    f.number = instance.number;
    f.thread = instance.thread;
    f.start_ns = instance.start_ns;
    f.end_ns = instance.end_ns;
    f.ended = !instance.open;
    f.live_at_start_bytes = instance.live_at_start;
    f.live_at_end_bytes = instance.live_at_end;
    f.peak_bytes = instance.peak_bytes;
    f.peak_time_ns = instance.peak_ns;
    f.allocated_bytes = instance.allocated_bytes;
    f.allocations = instance.allocations;
    f.left_live_bytes = instance.left_bytes;
    f.left_live_allocations = instance.left_count;
    if (!phase.instances.empty())
      f.growth_bytes = signed_change(phase.instances.back().live_at_end_bytes, instance.live_at_end);
    for (const replay::SiteBytes& share : instance.left_live) {
      if (f.left_live.size() >= input.selection().top) break;
      f.left_live.push_back(input.site(replay, {share.site, share.bytes, share.count}));
    }
    phase.instances.push_back(std::move(f));
  }
  return model;
}

}  // namespace gpumemtrace::report
