// The output formats, chosen with --format: above the renderers (render/) and the exports (export/), each
// format one row in the table of output_format.cpp. A format renders the report commands' models (text, json,
// html, folded, pprof), exports a whole trace (`gpumemtrace export`: folded, pprof, perfetto, csv,
// memory-viz), or both.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "analyzer/export/exporter.h"
#include "analyzer/render/render_options.h"
#include "analyzer/report/report.h"

namespace gpumemtrace::render {

struct OutputFormat {
  std::string_view name;         // the value of --format
  std::string_view description;  // one line in --help
  // Renders a report; nullptr: not a format of the report commands.
  void (*render)(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out) = nullptr;
  // The reports it renders; nullptr: all of them.
  bool (*renders)(const report::ReportBody& body) = nullptr;
  // Starts an export into `sink`; nullptr: not a format of `gpumemtrace export`.
  std::unique_ptr<Exporter> (*start_export)(const ExportOptions& options, ExportSink& sink) = nullptr;
  bool weighed = false;  // takes --what
  bool history = false;  // writes a history: takes --max-entries, and --from/--to choose the history's window
};

std::span<const OutputFormat* const> output_formats();
const OutputFormat* find_output_format(std::string_view name);
// "text, json, folded, pprof": the formats of the report commands (or of export).
std::string output_format_names(bool exports = false);

}  // namespace gpumemtrace::render
