// The renderers of a report model, one per output format of the report commands; the format table
// (format/output_format.cpp) names them.
#pragma once

#include <fmt/format.h>

#include "analyzer/render/render_options.h"
#include "analyzer/report/report.h"

namespace gpumemtrace::render {

void render_text(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out);
void render_json(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out);
void render_html(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out);

}  // namespace gpumemtrace::render
