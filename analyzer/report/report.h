// The reports: each a plain struct of models (computed from the replay, with the stacks symbolized), for
// the renderers of analyzer/render/ to turn into text, JSON or another format. docs/reports.md defines
// every figure.
#pragma once

#include <optional>
#include <variant>

#include "analyzer/report/accounts_model.h"
#include "analyzer/report/forecast_model.h"
#include "analyzer/report/fragmentation_model.h"
#include "analyzer/report/growth_model.h"
#include "analyzer/report/leaks_model.h"
#include "analyzer/report/model_input.h"
#include "analyzer/report/moments_model.h"
#include "analyzer/report/oom_model.h"
#include "analyzer/report/peak_model.h"
#include "analyzer/report/phases_model.h"
#include "analyzer/report/stacks.h"
#include "analyzer/report/timeline_model.h"
#include "analyzer/report/trace_header.h"
#include "analyzer/report/whatif_model.h"

namespace gpumemtrace::report {

// Everything in short, on one page.
struct SummaryReport {
  AccountsModel accounts;
  PeakModel peak;
  LeaksModel leaks;
  GrowthModel growth;
  OomModel ooms;
  FragmentationModel fragmentation;
  ForecastModel forecast;
};

struct PeakReport {
  AccountsModel accounts;
  PeakModel peak;
};

struct LeaksReport {
  AccountsModel accounts;
  LeaksModel leaks;
};

struct GrowthReport {
  GrowthModel growth;
};

struct OomReport {
  OomModel ooms;
};

struct FragmentationReport {
  FragmentationModel fragmentation;
};

struct TimelineReport {
  TimelineModel timeline;
};

struct PhasesReport {
  PhasesModel phases;
};

// Everything at once, for a viewer (`gpumemtrace html`): every model, the live sets at moments of the timeline,
// and when the trace has PyTorch's history, whatif under the recorded settings and --explore's grid.
struct ViewerReport {
  SummaryReport summary;
  TimelineModel timeline;
  PhasesModel phases;
  MomentsModel moments;
  std::optional<WhatifModel> whatif;
};

using ReportBody = std::variant<SummaryReport, PeakReport, LeaksReport, GrowthReport, OomReport,
                                FragmentationReport, TimelineReport, PhasesReport, ViewerReport>;

// Which view a report shows, when its figures depend on it (figures.h, View).
struct ReportView {
  View view = View::Reserved;
  size_t heaps = 0;  // the heaps of the trace; without any, both views are the same
  bool pytorch = false;  // they are PyTorch's segments (a snapshot, or snapshots joined to the trace)
};

struct Report {
  TraceHeader trace;
  Stacks stacks;  // every stack the body refers to
  ReportBody body;
  std::optional<ReportView> view;
};

SummaryReport summary_report(ModelInput& input);
PeakReport peak_report(ModelInput& input);
LeaksReport leaks_report(ModelInput& input);
GrowthReport growth_report(ModelInput& input);
OomReport oom_report(ModelInput& input);
FragmentationReport fragmentation_report(ModelInput& input);
TimelineReport timeline_report(ModelInput& input);
PhasesReport phases_report(ModelInput& input);
ViewerReport viewer_report(ModelInput& input);

using BuildBody = ReportBody (*)(ModelInput& input);
// One of the builders above as a BuildBody: build_body<peak_report>.
template <auto build>
ReportBody build_body(ModelInput& input) {
  return build(input);
}

// The sites of a report that is one set of stacks with their bytes (peak, leaks), for the formats that
// draw such a set (folded stacks, pprof); nullptr for the other reports.
const std::vector<SiteFigures>* report_sites(const ReportBody& body);

// Throws SelectionError (model_input.h).
Report build_report(const analysis::Analysis& analysis, const Selection& selection, SymbolizeStack symbolize, BuildBody build);

}  // namespace gpumemtrace::report
