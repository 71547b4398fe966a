// The outputs of a directory of traces (report/rank_report.h): the per-rank table, then the report of the
// rank or ranks shown, in the text or JSON of the single-trace reports. They render a RankReport, not one
// trace's Report, so they are not in the --format table (format/output_format.cpp); the report commands take
// text and json for a directory.
#pragma once

#include <fmt/format.h>

#include "analyzer/render/json_rank_balance.h"
#include "analyzer/render/render_options.h"
#include "analyzer/report/rank_report.h"

namespace gpumemtrace::render {

void text_rank_report(const report::RankReport& model, const RenderOptions& options, fmt::memory_buffer& out);
void json_rank_report(const report::RankReport& model, const RenderOptions& options, fmt::memory_buffer& out);

}  // namespace gpumemtrace::render
