// The per-rank table of a directory of traces (report/rank_balance.h) as JSON members: the directory
// reports' and check's. Apart from the other renderers so that the CI outputs (budget/) need only this and
// the JSON writer.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/render/json_writer.h"
#include "analyzer/report/rank_balance.h"

namespace gpumemtrace::render {

// A rank's label ("rank 3", "trace 1"), null for a lone process of unknown rank.
void write_rank_label(JsonWriter& json, std::string_view key, const std::string& rank);
// The per-rank table's members of an object: "ranks", and with rows "start_wall_ns", "largest_rank",
// "median_peak_bytes", "imbalance", "first_failed_rank" (also check's).
void write_rank_balance(JsonWriter& json, const report::RankBalance& balance);

}  // namespace gpumemtrace::render
