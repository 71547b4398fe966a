// The text output, for people: the trace header, then the report's sections (docs/reports.md, "Text").
#include "analyzer/render/renderers.h"
#include "analyzer/render/overloaded.h"
#include "analyzer/render/text_sections.h"
#include "analyzer/report/stack_text.h"

namespace gpumemtrace::render {

void render_text(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out) {
  report::Stacks shown = options.all_frames ? report::Stacks{} : report::user_stacks(report.stacks);
  const report::Stacks& stacks = options.all_frames ? report.stacks : shown;
  append_trace_header(out, report.trace);
  if (report.view) append_view(out, *report.view);
  out.push_back('\n');
  std::visit(Overloaded{
                 [&](const report::SummaryReport& r) {
                   append_accounts(out, r.accounts);
                   append_peak(out, r.peak, stacks, false);
                   append_leaks(out, r.leaks, stacks, false);
                   append_growth(out, r.growth, stacks, false);
                   append_ooms(out, r.ooms, stacks, false);
                   append_fragmentation(out, r.fragmentation, false);
                   append_forecast(out, r.forecast, stacks);
                 },
                 [&](const report::PeakReport& r) { append_peak(out, r.peak, stacks, true); },
                 [&](const report::LeaksReport& r) { append_leaks(out, r.leaks, stacks, true); },
                 [&](const report::GrowthReport& r) { append_growth(out, r.growth, stacks, true); },
                 [&](const report::OomReport& r) { append_ooms(out, r.ooms, stacks, true); },
                 [&](const report::FragmentationReport& r) { append_fragmentation(out, r.fragmentation, true); },
                 [&](const report::TimelineReport& r) { append_timeline(out, r.timeline, options.columns); },
                 [&](const report::PhasesReport& r) { append_phases(out, r.phases, stacks); },
                 [&](const report::ViewerReport& r) {  // the live sets at moments are for a viewer's clicks
                   append_accounts(out, r.summary.accounts);
                   append_peak(out, r.summary.peak, stacks, false);
                   append_leaks(out, r.summary.leaks, stacks, false);
                   append_growth(out, r.summary.growth, stacks, false);
                   append_ooms(out, r.summary.ooms, stacks, false);
                   append_fragmentation(out, r.summary.fragmentation, false);
                   append_forecast(out, r.summary.forecast, stacks);
                   append_timeline(out, r.timeline, options.columns);
                   append_phases(out, r.phases, stacks);
                 },
             },
             report.body);
}

}  // namespace gpumemtrace::render
