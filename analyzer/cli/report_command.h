// What the report commands (summary, peak, leaks, growth, oom, fragmentation, timeline, phases, html) share: their
// options, reading the trace through the replay model (with progress on a terminal), building the
// report's model and rendering it in the output format chosen. summary, peak, leaks and oom also read a
// directory of traces (rank_reports.h).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "analyzer/format/output_format.h"
#include "analyzer/report/rank_report.h"
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
  // Reads a directory of traces too: the per-rank table, then the report of the rank this picks (or --rank's).
  std::optional<report::RankFocus> ranks = std::nullopt;
};

struct ReportArguments {
  std::string path;
  const render::OutputFormat* format = nullptr;
  report::Selection selection;
  replay::ReplayOptions replay;  // --from, --to
  analysis::SourceOptions source;  // --no-snapshots
  report::RankChoice rank;       // --rank, for a directory
  std::optional<uint32_t> width;
  bool all_frames = false;
  std::optional<std::string> output;  // -o FILE, else stdout
};

int run_report(std::span<const std::string> args, const ReportCommand& command);

// Renders with the options of the command line.
render::RenderOptions render_options(const ReportArguments& arguments);
// Writes the output to -o FILE or stdout.
void write_report(const ReportArguments& arguments, const fmt::memory_buffer& out);

}  // namespace gpumemtrace::cli
