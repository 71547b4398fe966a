// summary, peak, leaks and oom of a directory of traces (one per rank or process): each trace read once,
// into its run profile and the command's report, then the per-rank table and the report of the rank
// that stands out, or of the ranks --rank chose (analyzer/report/rank_report.h).
#pragma once

#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

// Traces that cannot be read are reported, on stderr too, and left out; exit 2 when none can be read.
int run_rank_report(const ReportArguments& arguments, const ReportCommand& command);

}  // namespace gpumemtrace::cli
