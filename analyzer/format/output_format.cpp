#include "analyzer/format/output_format.h"

#include "analyzer/export/exports.h"
#include "analyzer/render/renderers.h"

namespace gpumemtrace::render {

namespace {

const OutputFormat kText{"text", "for people, the default", render_text};
const OutputFormat kJson{"json", "for machines, see docs/reports.md", render_json};
const OutputFormat kHtml{"html", "one self-contained page for a browser: `gpumemtrace html` has it all", render_html};
const OutputFormat kFolded{.name = "folded",
                           .description = "folded stacks for flame graphs; peak and leaks only",
                           .render = render_folded,
                           .renders = renders_site_sets,
                           .start_export = start_folded,
                           .weighed = true};
const OutputFormat kPprof{.name = "pprof",
                          .description = "a gzipped profile.proto for go tool pprof; peak and leaks only",
                          .render = render_pprof,
                          .renders = renders_site_sets,
                          .start_export = start_pprof,
                          .weighed = true};
const OutputFormat kPerfetto{.name = "perfetto",
                             .description = "Chrome/Perfetto trace-event JSON for ui.perfetto.dev",
                             .start_export = start_perfetto};
const OutputFormat kCsv{.name = "csv",
                        .description = "one row per allocation, and a stack table beside it",
                        .start_export = start_csv};
const OutputFormat kMemoryViz{
    .name = "memory-viz",
    .description = "a PyTorch memory snapshot (pickle) for pytorch.org/memory_viz and the tools that read them",
    .start_export = start_memory_viz,
    .history = true};

const OutputFormat* const kFormats[] = {&kText, &kJson, &kHtml, &kFolded, &kPprof, &kPerfetto, &kCsv, &kMemoryViz};
}  // namespace

std::span<const OutputFormat* const> output_formats() { return kFormats; }

const OutputFormat* find_output_format(std::string_view name) {
  for (const OutputFormat* format : kFormats)
    if (format->name == name) return format;
  return nullptr;
}

std::string output_format_names(bool exports) {
  std::string out;
  for (const OutputFormat* format : kFormats)
    if (exports ? format->start_export != nullptr : format->render != nullptr)
      out += (out.empty() ? "" : ", ") + std::string(format->name);
  return out;
}

}  // namespace gpumemtrace::render
