// What the report commands (summary, peak, leaks, growth, oom, fragmentation, timeline, phases, html) share: their
// options, reading the trace through the replay model (with progress on a terminal), building the
// report's model and rendering it in the output format chosen.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "analyzer/report/report.h"

namespace gpumemtrace::cli {

struct ReportCommand {
  std::string_view usage_and_purpose;  // the first part of --help; the common options follow
  size_t default_top = 10;
  bool takes_width = false;  // --width: timeline only
  report::BuildBody build;   // the report's model
  std::string_view default_format = "text";
  bool needs_output_file = false;  // a page, not for a terminal: -o FILE unless stdout is redirected
  bool takes_view = false;    // --view used|reserved: its figures depend on the view (docs/reports.md, "Views")
  bool takes_growth = false;  // --phase, --time-slices: it shows growth
  bool takes_at = false;      // --at TIME: its figures at a moment (the trace read up to it)
};

int run_report(std::span<const std::string> args, const ReportCommand& command);

}  // namespace gpumemtrace::cli
