#include "analyzer/cli/report_command.h"

#include <fmt/core.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/rank_reports.h"
#include "analyzer/cli/run_profiles.h"
#include "analyzer/cli/standard_output.h"
#include "analyzer/format/output_format.h"
#include "analyzer/symbolize/symbolizer.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

const render::OutputFormat& output_format(bool json, const std::optional<std::string>& name,
                                          std::string_view default_format) {
  if (json && name && *name != "json") throw UsageError("--json contradicts --format " + *name);
  std::string chosen = json ? "json" : name.value_or(std::string(default_format));
  const render::OutputFormat* format = render::find_output_format(chosen);
  if (format && !format->render && format->start_export)
    throw UsageError("--format " + chosen + " is a format of 'gpumemtrace export', not of the reports");
  if (!format || !format->render)
    throw UsageError("--format " + chosen + " is not one of: " + render::output_format_names());
  return *format;
}

// "text (for people, the default), json (for machines, see docs/reports.md), ..."
std::string format_choices(std::string_view default_format) {
  std::string out;
  for (const render::OutputFormat* format : render::output_formats())
    if (format->render) out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", format->name, format->description);
  return default_format == "text" ? out : out + fmt::format("; here {} is the default", default_format);
}

// nullopt: --help was printed.
std::optional<ReportArguments> parse(std::span<const std::string> args, const ReportCommand& command) {
  CommandLine line(command.usage_and_purpose, kExitStatusHelp);
  bool json = false;
  std::optional<std::string> format, device, top, min_size, width, from, to, rank, view;
  ReportArguments out;
  line.option("--format", "NAME", format, "the output: " + format_choices(command.default_format));
  line.option("-o,--output", "FILE", out.output,
              command.needs_output_file ? "the page to write (needed unless stdout is redirected)"
                                        : "write the output to FILE instead of stdout");
  line.flag("--json", json, "the same as --format json");
  line.flag("--all-frames", out.all_frames,
            "text: every frame of each stack, also the CUDA runtime's, the interpreter's and ctypes'");
  line.option("--device", "N", device, "only device N's memory");
  line.option("--top", "N", top, fmt::format("at most N stacks per device (default {})", command.default_top));
  line.option("--min-size", "SIZE", min_size, "leave out stacks with less than SIZE, e.g. 1MiB");
  declare_time_window(line, from, to);
  if (command.takes_width) line.option("--width", "N", width, "columns of the chart (default: the terminal's, or 80)");
  if (command.ranks)
    line.option("--rank", "N|all", rank,
                "a directory: the report of rank N, or of every rank, after the table (default: the rank that "
                "stands out)");
  if (command.takes_view)
    line.option("--view", "VIEW", view,
                "where a program's allocator reported heaps: used (its blocks count, not the segments that hold "
                "them; the default with heaps) or reserved (the driver's allocations)");
  if (command.takes_growth) {
    line.option("--phase", "PHASE", out.selection.growth_phase,
                "growth: the phase (path or name) whose instances are the windows (default: the top-level phase "
                "with the most instances, at least 3)");
    line.flag("--time-slices", out.selection.growth_time_slices, "growth: 10 equal time slices as the windows, even with phases");
  }
  bool no_snapshots = false;
  declare_no_snapshots(line, no_snapshots);
  line.operand(command.ranks ? "trace file or directory" : "trace file", out.path);
  if (!line.parse(args)) return std::nullopt;
  out.source.join_snapshots = !no_snapshots;

  out.format = &output_format(json, format, command.default_format);
  if (command.needs_output_file && !out.output && isatty(STDOUT_FILENO))
    throw UsageError("the output is a page for a browser: give -o FILE (e.g. -o report.html)");
  if (device) out.selection.device = static_cast<int32_t>(parse_number("--device", *device, INT32_MAX - 1));
  out.selection.top = top ? parse_number("--top", *top, 1'000'000) : command.default_top;
  if (min_size) out.selection.min_size = parse_size_option("--min-size", *min_size);
  TimeWindow window = parse_time_window(from, to);
  out.replay.selection.from_ns = window.from_ns;
  out.replay.selection.to_ns = window.to_ns;
  if (rank && *rank == "all") out.rank.all = true;
  else if (rank) out.rank.rank = static_cast<int64_t>(parse_number("--rank", *rank, INT32_MAX));
  if (view) {
    out.selection.view = report::view_named(*view);
    if (!out.selection.view) throw UsageError("--view " + *view + " is not one of: used, reserved");
  }
  if (out.selection.growth_phase && out.selection.growth_time_slices)
    throw UsageError("--phase contradicts --time-slices");
  // The used view (the default where heaps are) read on the second processor while the first reading goes.
  out.source.used_view_alongside =
      command.takes_view && out.selection.view != report::View::Reserved && !out.selection.growth_phase;
  if (width) {
    out.width = static_cast<uint32_t>(parse_number("--width", *width, 10'000));
    if (*out.width < 20) throw UsageError("--width " + *width + " is too narrow (20 columns at least)");
  }
  return out;
}

// --width, else the terminal's width, else $COLUMNS, else 80.
uint32_t output_columns(std::optional<uint32_t> width) {
  constexpr uint32_t kNarrowest = 20;
  if (width) return *width;
  if (winsize size{}; isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col)
    return std::max<uint32_t>(size.ws_col, kNarrowest);
  if (const char* columns = std::getenv("COLUMNS"); columns && std::atoi(columns) >= int{kNarrowest})
    return static_cast<uint32_t>(std::atoi(columns));
  return 80;
}

}  // namespace

render::RenderOptions render_options(const ReportArguments& arguments) {
  return {output_columns(arguments.width), arguments.all_frames};
}

void write_report(const ReportArguments& arguments, const fmt::memory_buffer& out) {
  if (arguments.output) {
    write_output_file(*arguments.output, std::string_view(out.data(), out.size()));
    return;
  }
  write_stdout(std::string_view(out.data(), out.size()));
  flush_stdout();
}

int run_report(std::span<const std::string> args, const ReportCommand& command) {
  std::optional<ReportArguments> arguments = parse(args, command);
  if (!arguments) return kExitOk;
  std::error_code error;
  if (std::filesystem::is_directory(arguments->path, error)) {
    if (!command.ranks)
      return trace_error(arguments->path, "a directory: give one trace (summary, peak, leaks and oom read a directory)");
    return run_rank_report(*arguments, command);
  }
  if (arguments->rank.all || arguments->rank.rank) throw UsageError("--rank is for a directory of traces");

  analysis::Analysis analysis;
  try {
    analysis = read_trace(arguments->path, arguments->replay, arguments->source);
  } catch (const trace::OpenError& error) {
    return trace_error(arguments->path, error.what());
  }
  if (analysis.trace.corrupt) return trace_error(arguments->path, analysis.trace.error);

  symbolize::Symbolizer symbolizer(analysis.replay->stacks(), print_warning);
  report::Report report;
  try {
    report = report::build_report(
        analysis, arguments->selection, [&](replay::StackId id) { return symbolizer.stack(id); },
        command.build);
  } catch (const report::SelectionError& error) {
    throw UsageError(error.what());
  }

  if (arguments->format->renders && !arguments->format->renders(report.body))
    throw UsageError(fmt::format("--format {} renders the peak and leaks reports only", arguments->format->name));
  fmt::memory_buffer out;
  arguments->format->render(report, render_options(*arguments), out);
  write_report(*arguments, out);
  return kExitOk;
}

}  // namespace gpumemtrace::cli
