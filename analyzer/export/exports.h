// The exports of a trace, one file each; the format table (format/output_format.cpp) names them. folded and
// pprof also render the reports that are one set of stacks (peak, leaks).
#pragma once

#include <fmt/format.h>

#include <memory>

#include "analyzer/export/exporter.h"
#include "analyzer/render/render_options.h"
#include "analyzer/report/report.h"

namespace gpumemtrace::render {

std::unique_ptr<Exporter> start_csv(const ExportOptions& options, ExportSink& sink);
std::unique_ptr<Exporter> start_folded(const ExportOptions& options, ExportSink& sink);
std::unique_ptr<Exporter> start_memory_viz(const ExportOptions& options, ExportSink& sink);
std::unique_ptr<Exporter> start_perfetto(const ExportOptions& options, ExportSink& sink);
std::unique_ptr<Exporter> start_pprof(const ExportOptions& options, ExportSink& sink);

void render_folded(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out);
void render_pprof(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out);
// Whether a report is one set of stacks (peak, leaks): the reports folded and pprof render.
inline bool renders_site_sets(const report::ReportBody& body) { return report::report_sites(body) != nullptr; }

}  // namespace gpumemtrace::render
