// gpumemtrace export TRACE --format FORMAT -o FILE: the trace in a format other tools read (flame graphs,
// pprof, Perfetto, CSV, PyTorch's memory viewer), with the allocations chosen by --device, --from, --to and --min-size before
// anything is built (docs/exports.md).
#include <fmt/core.h>

#include <optional>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/output_file.h"
#include "analyzer/cli/run_profiles.h"
#include "analyzer/format/output_format.h"
#include "analyzer/symbolize/symbolizer.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kExportHelp =
    "usage: gpumemtrace export --format FORMAT -o FILE [options] TRACE\n"
    "\n"
    "Writes the trace for other tools (docs/exports.md):\n"
    "  folded    folded stacks for flamegraph.pl, inferno and speedscope: 'device 0;main;f BYTES' per line\n"
    "  pprof     a gzip-compressed profile.proto heap profile (space/bytes, allocations/count) for\n"
    "            'go tool pprof'\n"
    "  perfetto  Chrome/Perfetto trace-event JSON for ui.perfetto.dev: live memory per device and kind,\n"
    "            the largest allocations with their stacks, phases, out-of-memory and failed calls\n"
    "  csv       one row per allocation, and the stacks in FILE.stacks.csv beside it\n"
    "  memory-viz  a PyTorch memory snapshot (pickle) for pytorch.org/memory_viz: the device memory as\n"
    "            segments, with their blocks where a heap reports them, and every change as its history\n"
    "Only the allocations that --device, --from, --to and --min-size select are read: every figure is\n"
    "about them (the peak is the peak of the selected allocations). memory-viz reads every allocation and\n"
    "writes the part of its history from --from to --to, at most the last --max-entries of each device,\n"
    "with the segments as they were at --to; it says on stderr how many history entries it left out.\n";

struct ExportArguments {
  std::string path;
  std::string output;
  const render::OutputFormat* format = nullptr;
  render::ExportOptions options;
  replay::EventSelection selection;
  analysis::SourceOptions source;
};

const render::OutputFormat& export_format(const std::optional<std::string>& name) {
  std::string choices = render::output_format_names(true);
  if (!name) throw UsageError("--format is required: one of " + choices);
  const render::OutputFormat* format = render::find_output_format(*name);
  if (!format || !format->start_export) throw UsageError("--format " + *name + " is not one of: " + choices);
  return *format;
}

// nullopt: --help was printed.
std::optional<ExportArguments> parse(std::span<const std::string> args) {
  CommandLine line(kExportHelp, kExitStatusHelp);
  std::optional<std::string> format, output, what, device, from, to, min_size, max_entries;
  ExportArguments out;
  line.option("--format", "FORMAT", format, "the output: " + render::output_format_names(true) + " (required)");
  line.option("-o,--output", "FILE", output, "the file to write (required)");
  line.option("--what", "WHAT", what,
              "folded and pprof: the bytes live at each device's peak (peak, the default), still live at the end "
              "(leaked) or ever allocated (allocated)");
  line.option("--device", "N", device, "only device N's memory");
  declare_time_window(line, from, to);
  line.option("--min-size", "SIZE", min_size, "only allocations of at least SIZE, e.g. 1MiB");
  line.option("--max-entries", "N", max_entries,
              "memory-viz: only the last N history entries of each device (PyTorch's viewer shows about 600 k)");
  line.flag("--all-frames", out.options.all_frames,
            "folded and pprof: every frame of each stack, also the CUDA runtime's, the interpreter's and ctypes'");
  bool no_snapshots = false;
  declare_no_snapshots(line, no_snapshots);
  line.operand("trace file", out.path);
  if (!line.parse(args)) return std::nullopt;
  out.source.join_snapshots = !no_snapshots;

  out.format = &export_format(format);
  if (!output || output->empty()) throw UsageError("-o FILE is required: where to write the " + std::string(out.format->name));
  out.output = *output;
  if (what) {
    if (!out.format->weighed) throw UsageError("--what is for folded and pprof, not " + std::string(out.format->name));
    std::optional<report::Weighing> weighing = report::weighing_named(*what);
    if (!weighing) throw UsageError("--what " + *what + " is not one of: peak, leaked, allocated");
    out.options.what = *weighing;
  }
  if (device) out.selection.device = static_cast<int32_t>(parse_number("--device", *device, INT32_MAX - 1));
  TimeWindow window = parse_time_window(from, to);
  if (out.format->history) {
    out.options.history = {window.from_ns, window.to_ns, UINT64_MAX, from.value_or(""), to.value_or("")};
  } else {
    out.selection.from_ns = window.from_ns;
    out.selection.to_ns = window.to_ns;
  }
  if (max_entries) {
    if (!out.format->history)
      throw UsageError("--max-entries is for memory-viz, not " + std::string(out.format->name));
    out.options.history.max_entries = parse_number("--max-entries", *max_entries, UINT32_MAX);
    if (out.options.history.max_entries == 0) throw UsageError("--max-entries 0 keeps no history: give 1 or more");
  }
  if (min_size) out.selection.min_size = parse_size_option("--min-size", *min_size);
  return out;
}

int export_main(std::span<const std::string> args) {
  std::optional<ExportArguments> arguments = parse(args);
  if (!arguments) return kExitOk;

  OutputFile output(arguments->output);
  std::unique_ptr<render::Exporter> exporter = arguments->format->start_export(arguments->options, output);
  replay::ReplayOptions options;
  options.selection = arguments->selection;
  options.listener = exporter->listener();
  options.destroyed_heaps_kept = UINT64_MAX;  // an export writes every heap (perfetto: a track each)
  analysis::Analysis analysis;
  try {
    analysis = read_trace(arguments->path, options, arguments->source);
  } catch (const trace::OpenError& error) {
    output.discard();
    return trace_error(arguments->path, error.what());
  }
  if (analysis.trace.corrupt) {
    output.discard();
    return trace_error(arguments->path, analysis.trace.error);
  }

  symbolize::Symbolizer symbolizer(analysis.replay->stacks(), print_warning);
  exporter->finish(analysis, [&](replay::StackId id) { return symbolizer.stack(id); });
  output.close();
  if (std::string left_out = exporter->left_out(); !left_out.empty()) fmt::print(stderr, "gpumemtrace: {}\n", left_out);
  return kExitOk;
}

}  // namespace

extern const Command export_command;
const Command export_command{"export", "the trace for flame graphs, pprof, Perfetto, CSV or PyTorch's memory viewer",
                             export_main};

}  // namespace gpumemtrace::cli
