// The outputs of a directory of traces (report/rank_report.h): the per-rank table, then the report of the
// rank or ranks shown, in the text or JSON of the single-trace reports. They render a RankReport, not one
// trace's Report, so they are not in the --format table (format/output_format.cpp); the report commands take
// text and json for a directory.
#pragma once

#include <fmt/format.h>

#include "analyzer/render/json_writer.h"
#include "analyzer/render/render_options.h"
#include "analyzer/report/rank_report.h"

namespace gpumemtrace::render {

void text_rank_report(const report::RankReport& model, const RenderOptions& options, fmt::memory_buffer& out);
void json_rank_report(const report::RankReport& model, const RenderOptions& options, fmt::memory_buffer& out);

// A rank's label ("rank 3", "trace 1"), null for a lone process of unknown rank.
void write_rank_label(JsonWriter& json, std::string_view key, const std::string& rank);
// The per-rank table's members of an object: "ranks", and with rows "start_wall_ns", "largest_rank",
// "median_peak_bytes", "imbalance", "first_failed_rank" (also check's).
void write_rank_balance(JsonWriter& json, const report::RankBalance& balance);

}  // namespace gpumemtrace::render
