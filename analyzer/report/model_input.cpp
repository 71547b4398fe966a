#include "analyzer/report/model_input.h"

#include <fmt/core.h>

#include <algorithm>

#include "analyzer/report/forecast.h"

namespace gpumemtrace::report {

namespace {

// The phase paths named `wanted`: that path, else those whose innermost phase has that name.
std::vector<replay::PathId> paths_named(const replay::PhaseTracker& phases, const std::string& wanted) {
  std::vector<replay::PathId> named;
  for (replay::PathId path = 1; path < phases.path_count(); ++path)
    if (phases.path_text(path) == wanted) return {path};
  for (replay::PathId path = 1; path < phases.path_count(); ++path)
    if (phases.name_text(phases.name_of(path)) == wanted) named.push_back(path);
  return named;
}

// docs/reports.md, "Growth": the phase --phase names, else (unless --time-slices) the top-level phase path
// with the most windows, at least 3 (the first entered of equals), else equal time slices.
GrowthWindows choose_growth_windows(const replay::Replay& replay, const Selection& selection) {
  const replay::PhaseTracker& phases = replay.phases();
  const replay::PhaseInstances& instances = replay.phase_instances();
  replay::PathId chosen = replay::kNoPhase;
  if (selection.growth_phase) {
    std::vector<replay::PathId> named = paths_named(phases, *selection.growth_phase);
    if (named.empty()) throw SelectionError(fmt::format("--phase {}: the trace has no such phase", *selection.growth_phase));
    if (named.size() > 1) {
      std::string paths;
      for (replay::PathId path : named) paths += (paths.empty() ? "" : ", ") + phases.path_text(path);
      throw SelectionError(fmt::format("--phase {} names several phase paths: {}; give one", *selection.growth_phase, paths));
    }
    chosen = named.front();
    if (instances.windows(chosen) < 3)
      throw SelectionError(fmt::format("--phase {}: growth needs at least 3 instances, the trace has {}",
                                       *selection.growth_phase, instances.windows(chosen)));
  } else if (!selection.growth_time_slices) {
    chosen = most_repeated_phase(replay).value_or(replay::kNoPhase);
  }
  GrowthWindows out;
  if (chosen == replay::kNoPhase) return out;
  uint32_t windows = instances.windows(chosen);
  out.phase = replay::PhaseWindowsPlan{chosen, windows, std::min(windows, kGrowthWindows)};
  out.phase_path = phases.path_text(chosen);
  return out;
}

}  // namespace

ModelInput::ModelInput(const analysis::Analysis& analysis, const Selection& selection, SymbolizeStack symbolize, Stacks& stacks)
    : analysis_(analysis), selection_(selection), symbolize_(std::move(symbolize)), stacks_(stacks) {
  view_ = selection.view.value_or(heaps() > 0 ? View::Used : View::Reserved);
  growth_windows_ = choose_growth_windows(reserved_replay(), selection);
  // The used view read alongside the first reading has no growth windows of a phase: not taken, not finished.
  if (growth_windows_.phase && analysis.used_alongside) analysis.used_alongside->stop();
}

ModelInput::~ModelInput() = default;

SiteFilter ModelInput::filter(bool device_memory_only) const {
  SiteFilter filter;
  filter.device = selection_.device;
  filter.device_memory_only = device_memory_only;
  filter.min_size = selection_.min_size;
  filter.top = selection_.top;
  return filter;
}

const replay::Replay& ModelInput::second_reading(std::unique_ptr<replay::Replay>& slot, bool used) {
  if (slot) return *slot;
  if (used && !growth_windows_.phase) {
    slot = analysis::take_used_alongside(analysis_);
    if (slot) return *slot;
  }
  replay::ReplayOptions options = analysis_.options;
  if (used) options.used_view = std::make_shared<const replay::UsedView>(reserved_replay().used_view());
  options.growth_phase = growth_windows_.phase;
  slot = analysis::reread(analysis_, used ? analysis::Pass::UsedView : analysis::Pass::GrowthWindows, options);
  return *slot;
}

const replay::Replay& ModelInput::replay_of(View view) {
  if (view == View::Used && heaps() > 0) return second_reading(used_, true);
  return reserved_replay();
}

const replay::Replay& ModelInput::growth_replay() {
  if (!growth_windows_.phase) return replay();
  view_asked_ = true;
  if (view_ == View::Used && heaps() > 0) return second_reading(used_, true);
  return second_reading(reserved_growth_, false);
}

replay::StackId ModelInput::stack(replay::StackId id) {
  if (!stacks_.frames.contains(id)) stacks_.frames.emplace(id, symbolize_(id));
  return id;
}

AccountFigures ModelInput::account(const replay::Account& account) const {
  AccountFigures out;
  out.memory = memory_of(account.category);
  out.device = account.category == replay::Category::Device ? device_of(account.device) : std::nullopt;
  out.peak_bytes = account.peak_bytes;
  out.peak_time_ns = account.peak_time_ns;
  out.peak_count = account.peak_count;
  out.final_bytes = account.live_bytes;
  out.final_count = account.live_count;
  out.leaked_allocations = trace().complete ? account.live_count : 0;
  out.allocations = account.allocations;
  out.frees = account.frees;
  out.failed_allocations = account.failed_allocations;
  return out;
}

SiteFigures ModelInput::site(const replay::Replay& replay, const replay::SiteShare& share) {
  const replay::Site& site = replay.sites()[share.site];
  return {memory_of(site.category), device_of(site.device), share.bytes, share.count, stack(site.stack)};
}

}  // namespace gpumemtrace::report
