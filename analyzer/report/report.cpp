#include "analyzer/report/report.h"

namespace gpumemtrace::report {

SummaryReport summary_report(ModelInput& input) {
  return {accounts_model(input, true), peak_model(input),  leaks_model(input),
          growth_model(input),   oom_model(input),   fragmentation_model(input),
          forecast_model(input)};
}

PeakReport peak_report(ModelInput& input) { return {accounts_model(input), peak_model(input)}; }
LeaksReport leaks_report(ModelInput& input) { return {accounts_model(input), leaks_model(input)}; }
GrowthReport growth_report(ModelInput& input) { return {growth_model(input)}; }
OomReport oom_report(ModelInput& input) { return {oom_model(input)}; }
FragmentationReport fragmentation_report(ModelInput& input) { return {fragmentation_model(input)}; }
TimelineReport timeline_report(ModelInput& input) { return {timeline_model(input)}; }
PhasesReport phases_report(ModelInput& input) { return {phases_model(input)}; }
ViewerReport viewer_report(ModelInput& input) {
  ViewerReport out{summary_report(input), timeline_model(input), phases_model(input), moments_model(input), {}};
  // PyTorch's history, else a program's own heaps: their blocks are the requests (whatif_model.h).
  if (input.trace().heaps_are_pytorch() || input.analysis().replay->heaps().created() > 0) {
    WhatifRequest request;
    request.explore = true;
    try {
      out.whatif = whatif_report(input.trace().path, request);
    } catch (const WhatifError&) {  // no history to replay: the page has no what-if table
    }
  }
  return out;
}

const std::vector<SiteFigures>* report_sites(const ReportBody& body) {
  if (const auto* peak = std::get_if<PeakReport>(&body)) return &peak->peak.sites;
  if (const auto* leaks = std::get_if<LeaksReport>(&body)) return &leaks->leaks.sites;
  return nullptr;
}

Report build_report(const analysis::Analysis& analysis, const Selection& selection, SymbolizeStack symbolize, BuildBody build) {
  Report report;
  report.trace = trace_header(analysis);
  ModelInput input(analysis, selection, std::move(symbolize), report.stacks);
  report.body = build(input);
  if (input.view_asked()) report.view = ReportView{input.view(), input.heaps(), input.trace().heaps_are_pytorch()};
  return report;
}

}  // namespace gpumemtrace::report
