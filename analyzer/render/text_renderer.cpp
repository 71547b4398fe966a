// The text output, for people: the trace header, then the report's sections (docs/reports.md, "Text").
#include "analyzer/render/output_format.h"
#include "analyzer/render/overloaded.h"
#include "analyzer/render/text_sections.h"
#include "analyzer/report/stack_text.h"

namespace gpumemtrace::render {

namespace {

// The stacks as people read them first: their own code on top (report::user_frames).
report::Stacks user_stacks(const report::Stacks& stacks) {
  report::Stacks out;
  for (const auto& [id, frames] : stacks.frames) out.frames.emplace(id, report::user_frames(frames));
  return out;
}

void render_text(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out) {
  report::Stacks shown = options.all_frames ? report::Stacks{} : user_stacks(report.stacks);
  const report::Stacks& stacks = options.all_frames ? report.stacks : shown;
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
                 [&](const report::PhasesReport& r) { append_phases(out, r.phases, stacks); },
             },
             report.body);
}

}  // namespace

extern const OutputFormat text_format;
const OutputFormat text_format{"text", "for people, the default", render_text};

}  // namespace gpumemtrace::render
