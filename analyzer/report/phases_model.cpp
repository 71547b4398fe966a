#include "analyzer/report/phases_model.h"

#include <map>

namespace gpumemtrace::report {

PhaseInstanceFigures instance_figures(ModelInput& input, const replay::PhaseInstance& instance) {
  const replay::Replay& replay = input.reserved_replay();
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
  for (const replay::SiteBytes& share : instance.left_live) {
    if (f.left_live.size() >= input.selection().top) break;
    f.left_live.push_back(input.site(replay, {share.site, share.bytes, share.count}));
  }
  return f;
}

PhasesModel phases_model(ModelInput& input) {
  const replay::Replay& replay = input.reserved_replay();
  PhasesModel model;
  std::map<replay::PathId, size_t> index;  // path → its place in model.phases
  for (const replay::PhaseInstance& instance : replay.phase_instances().instances()) {
    auto [it, added] = index.try_emplace(instance.path, model.phases.size());
    if (added) model.phases.push_back({replay.phases().path_text(instance.path), {}});
    PhaseFigures& phase = model.phases[it->second];
    PhaseInstanceFigures f = instance_figures(input, instance);
    if (!phase.instances.empty())
      f.growth_bytes = signed_change(phase.instances.back().live_at_end_bytes, instance.live_at_end);
    phase.instances.push_back(std::move(f));
  }
  const replay::PhaseTracker& tracker = replay.phases();
  PhaseBalance& balance = model.balance;
  for (const replay::PhaseTracker::NeverPopped& open : tracker.never_popped()) {
    if (open.count < 2) break;  // one open push is a phase the trace ended in, not a missing pop
    if (balance.unpopped.size() < 5) balance.unpopped.push_back({tracker.name_text(open.name), open.thread, open.count});
    ++balance.unpopped_names;
  }
  balance.deeper_than_max = tracker.too_deep();
  balance.unmatched_ends = tracker.unmatched();
  return model;
}

}  // namespace gpumemtrace::report
