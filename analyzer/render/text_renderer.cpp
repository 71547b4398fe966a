// The text output, for people: the trace header, then the report's sections (docs/reports.md, "Text").
#include "analyzer/render/output_format.h"
#include "analyzer/render/overloaded.h"
#include "analyzer/render/text_sections.h"

namespace gpumemtrace::render {

namespace {

void render_text(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out) {
  const report::Stacks& stacks = report.stacks;
  append_trace_header(out, report.trace);
  out.push_back('\n');
  std::visit(Overloaded{
                 [&](const report::SummaryReport& r) {
                   append_accounts(out, r.accounts);
                   append_peak(out, r.peak, stacks, false);
                   append_leaks(out, r.leaks, stacks, false);
                   append_growth(out, r.growth, stacks, false);
                   append_ooms(out, r.ooms, stacks, false);
                   append_fragmentation(out, r.fragmentation, false);
                 },
                 [&](const report::PeakReport& r) { append_peak(out, r.peak, stacks, true); },
                 [&](const report::LeaksReport& r) { append_leaks(out, r.leaks, stacks, true); },
                 [&](const report::GrowthReport& r) { append_growth(out, r.growth, stacks, true); },
                 [&](const report::OomReport& r) { append_ooms(out, r.ooms, stacks, true); },
                 [&](const report::FragmentationReport& r) { append_fragmentation(out, r.fragmentation, true); },
                 [&](const report::TimelineReport& r) { append_timeline(out, r.timeline, options.columns); },
             },
             report.body);
}

}  // namespace

extern const OutputFormat text_format;
const OutputFormat text_format{"text", "for people, the default", render_text};

}  // namespace gpumemtrace::render
