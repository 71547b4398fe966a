// What the report models are built from: the trace read through the replay, the options that select
// what a report shows, and the symbolizer. Every stack a model refers to is symbolized once, into the
// report's Stacks.
//
// The trace is read once as the driver saw it. The view (figures.h) and growth's windows may need a second
// reading: the used view of a trace with heaps (the heaps' blocks in place of their segments), and
// growth windows that follow a phase. It is made the first time a model asks for it, once for both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "analyzer/replay/replay.h"
#include "analyzer/report/figures.h"
#include "analyzer/report/growth.h"
#include "analyzer/report/site_ranking.h"
#include "analyzer/report/stacks.h"
#include "analyzer/analysis/analysis.h"

namespace gpumemtrace::report {

struct Selection {
  std::optional<int32_t> device;  // --device: only this device's memory
  size_t top = 10;                // --top: stacks per device (and failures in the summary)
  uint64_t min_size = 0;          // --min-size: leave out stacks with less
  std::optional<View> view;       // --view; by default used when the trace has heaps, else reserved
  std::optional<std::string> growth_phase;  // --phase: the phase (path or name) whose instances are growth's windows
  bool growth_time_slices = false;          // --time-slices: growth's windows are equal time slices
};

// A selection the trace cannot satisfy (a --phase it does not have).
class SelectionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ModelInput {
 public:
  // Throws SelectionError.
  ModelInput(const analysis::Analysis& analysis, const Selection& selection, SymbolizeStack symbolize, Stacks& stacks);
  ~ModelInput();

  const analysis::Analysis& analysis() const { return analysis_; }
  const analysis::TraceInfo& trace() const { return analysis_.trace; }
  const Selection& selection() const { return selection_; }
  // The --device, --min-size and --top options as a filter of sites.
  SiteFilter filter(bool device_memory_only) const;

  View view() const { return view_; }
  size_t heaps() const { return reserved_replay().heaps().created(); }
  // The replay of the view, and of either view.
  const replay::Replay& replay() {
    view_asked_ = true;
    return replay_of(view_);
  }
  const replay::Replay& replay_of(View view);
  // The trace as the driver saw it, whatever the view: what oom, fragmentation and phases show.
  const replay::Replay& reserved_replay() const { return *analysis_.replay; }
  // The view's replay with growth_windows() as its growth windows.
  const replay::Replay& growth_replay();
  const GrowthWindows& growth_windows() const { return growth_windows_; }
  // Whether a model asked for the view's replay: the report then says which view it shows.
  bool view_asked() const { return view_asked_; }

  // Symbolizes the stack into the report's Stacks (once) and returns its id.
  replay::StackId stack(replay::StackId id);
  const Frames& frames(replay::StackId id) { return stacks_[stack(id)]; }

  AccountFigures account(const replay::Account& account) const;
  // A site of `replay` (the one its share was taken from).
  SiteFigures site(const replay::Replay& replay, const replay::SiteShare& share);

 private:
  const replay::Replay& second_reading(std::unique_ptr<replay::Replay>& slot, bool used);

  const analysis::Analysis& analysis_;
  Selection selection_;
  SymbolizeStack symbolize_;
  Stacks& stacks_;
  View view_ = View::Reserved;
  bool view_asked_ = false;
  GrowthWindows growth_windows_;
  std::unique_ptr<replay::Replay> used_;              // the used view (growth's windows with it)
  std::unique_ptr<replay::Replay> reserved_growth_;  // the reserved view with growth's phase windows
};

}  // namespace gpumemtrace::report
