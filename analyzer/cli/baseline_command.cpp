// gpumemtrace baseline TRACE|DIR -o FILE: the figures `check --baseline` and `diff` compare against, as a
// small JSON file to commit.
#include <fmt/core.h>

#include <optional>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/run_profiles.h"
#include "analyzer/cli/standard_output.h"
#include "analyzer/render/budget/baseline_json.h"
#include "common/terminal_text.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kBaselineHelp =
    "usage: gpumemtrace baseline -o FILE TRACE|DIR\n"
    "\n"
    "Writes a baseline of a trace, or of every trace in a directory (one per rank or process): per rank\n"
    "and device the peak of device memory, the bytes leaked and still live at the end, the counts of\n"
    "allocations, frees and failures, and the bytes each call stack held at the peak. A stack is keyed by\n"
    "its functions and source files (no addresses, no line numbers), so the baseline still matches after a\n"
    "rebuild; there are no times, pids or paths, so two identical runs give the same bytes. Commit it and\n"
    "compare later runs with `gpumemtrace check --baseline FILE` or `gpumemtrace diff FILE TRACE`.\n";

int baseline_main(std::span<const std::string> args) {
  CommandLine line(kBaselineHelp, kExitStatusHelp);
  std::optional<std::string> output;
  std::string path;
  line.option("-o,--output", "FILE", output, "the baseline file to write ('-' for stdout)");
  line.operand("trace file or directory", path);
  if (!line.parse(args)) return kExitOk;
  if (!output || output->empty()) throw UsageError("-o FILE is required: where to write the baseline");

  std::vector<report::RunProfile> runs;
  try {
    runs = load_traces(path);
  } catch (const InputError& error) {
    return trace_error(error.path, error.what());
  }
  fmt::memory_buffer text;
  render::render_baseline(runs, text);
  write_output_file(*output, std::string_view(text.data(), text.size()));
  if (*output == "-") return kExitOk;
  fmt::print(stderr, "gpumemtrace: baseline of {} {} written to {}\n", runs.size(), runs.size() == 1 ? "trace" : "traces",
             terminal_text(*output));
  return kExitOk;
}

}  // namespace

extern const Command baseline_command;
const Command baseline_command{"baseline", "write the figures of a run as a baseline to commit (for check, diff)",
                               baseline_main};

}  // namespace gpumemtrace::cli
