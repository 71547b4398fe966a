// What the report models are built from: the trace read through the replay, the options that select
// what a report shows, and the symbolizer. Every stack a model refers to is symbolized once, into the
// report's Stacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "analyzer/replay/replay.h"
#include "analyzer/report/figures.h"
#include "analyzer/report/site_ranking.h"
#include "analyzer/report/stacks.h"
#include "analyzer/sources/analysis.h"

namespace gpumemtrace::report {

struct Selection {
  std::optional<int32_t> device;  // --device: only this device's memory
  size_t top = 10;                // --top: stacks per device (and failures in the summary)
  uint64_t min_size = 0;          // --min-size: leave out stacks with less
};

class ModelInput {
 public:
  ModelInput(const Analysis& analysis, const Selection& selection, SymbolizeStack symbolize, Stacks& stacks)
      : analysis_(analysis), selection_(selection), symbolize_(std::move(symbolize)), stacks_(stacks) {}

  const Analysis& analysis() const { return analysis_; }
  const TraceInfo& trace() const { return analysis_.trace; }
  const replay::Replay& replay() const { return *analysis_.replay; }
  const Selection& selection() const { return selection_; }
  // The --device, --min-size and --top options as a filter of sites.
  SiteFilter filter(bool device_memory_only) const;

  // Symbolizes the stack into the report's Stacks (once) and returns its id.
  replay::StackId stack(replay::StackId id);
  const Frames& frames(replay::StackId id) { return stacks_[stack(id)]; }

  AccountFigures account(const replay::Account& account) const;
  SiteFigures site(const replay::SiteShare& share);

 private:
  const Analysis& analysis_;
  Selection selection_;
  SymbolizeStack symbolize_;
  Stacks& stacks_;
};

}  // namespace gpumemtrace::report
