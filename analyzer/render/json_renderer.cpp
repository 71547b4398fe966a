// The JSON output, for machines: {"trace": {...}, then the report's members} (docs/reports.md, "JSON").
#include "analyzer/render/json_sections.h"
#include "analyzer/render/renderers.h"
#include "analyzer/render/overloaded.h"
#include "analyzer/render/whatif_renderers.h"

namespace gpumemtrace::render {

void render_json(const report::Report& report, const RenderOptions&, fmt::memory_buffer& out) {
  const report::Stacks& stacks = report.stacks;
  JsonWriter json(out);
  json.begin_object();
  write_trace(json, report.trace);
  write_view(json, report.view);
  std::visit(Overloaded{
                 [&](const report::SummaryReport& r) {
                   write_accounts(json, r.accounts);
                   write_peak(json, r.peak, stacks);
                   write_leaks(json, r.leaks, stacks, false);
                   write_growth(json, r.growth, stacks, false);
                   write_ooms(json, r.ooms, stacks, false);
                   write_fragmentation(json, "fragmentation", r.fragmentation);
                   write_forecast(json, r.forecast, stacks);
                 },
                 [&](const report::PeakReport& r) {
                   write_accounts(json, r.accounts);
                   write_peak(json, r.peak, stacks);
                 },
                 [&](const report::LeaksReport& r) {
                   write_accounts(json, r.accounts);
                   write_leaks(json, r.leaks, stacks, true);
                 },
                 [&](const report::GrowthReport& r) { write_growth(json, r.growth, stacks, true); },
                 [&](const report::OomReport& r) { write_ooms(json, r.ooms, stacks, true); },
                 [&](const report::FragmentationReport& r) {
                   json.optional_number("at_ns", r.fragmentation.at_ns);
                   write_fragmentation(json, "devices", r.fragmentation);
                 },
                 [&](const report::TimelineReport& r) { write_timeline(json, r.timeline); },
                 [&](const report::PhasesReport& r) { write_phases(json, r.phases, stacks); },
                 [&](const report::ViewerReport& r) {
                   write_accounts(json, r.summary.accounts);
                   write_peak(json, r.summary.peak, stacks);
                   write_leaks(json, r.summary.leaks, stacks, true);
                   write_growth(json, r.summary.growth, stacks, true);
                   write_ooms(json, r.summary.ooms, stacks, true);
                   write_fragmentation(json, "fragmentation", r.summary.fragmentation);
                   write_forecast(json, r.summary.forecast, stacks);
                   json.begin_object("timeline");
                   write_timeline(json, r.timeline);
                   json.end_object();
                   write_phases(json, r.phases, stacks);
                   write_moments(json, r.moments, stacks);
                   if (r.whatif) {
                     fmt::memory_buffer whatif;
                     render_whatif_json(*r.whatif, whatif);
                     json.raw("whatif", std::string_view(whatif.data(), whatif.size() - 1));  // less its newline
                   } else {
                     json.null("whatif");
                   }
                 },
             },
             report.body);
  json.end_object();
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
