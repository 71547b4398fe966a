// gpumemtrace diff A B: what changed from run A to run B, per device, and which stacks it came from.
#include <optional>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/run_profiles.h"
#include "analyzer/cli/standard_output.h"
#include "analyzer/render/budget/budget_output.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kDiffHelp =
    "usage: gpumemtrace diff [options] A B\n"
    "\n"
    "Compares run B with run A; each is a trace, a directory of traces (one per rank) or a baseline file\n"
    "(gpumemtrace baseline). Per rank and device: the peak, leaked and final bytes of device memory in A\n"
    "and B and their change, and the call stacks whose bytes at the peak grew or shrank most, matched by\n"
    "their functions and source files, not by address (like pprof -diff_base).\n";

int diff_main(std::span<const std::string> args) {
  CommandLine line(kDiffHelp, kExitStatusHelp);
  std::vector<std::string> paths;
  std::optional<std::string> top;
  bool json = false;
  line.flag("--json", json, "print JSON instead of text (docs/reports.md)");
  line.option("--top", "N", top, "at most N stacks that grew and N that shrank per device (default 10)");
  line.operands("run (trace, directory or baseline)", paths, 2);
  if (!line.parse(args)) return kExitOk;
  size_t stacks = top ? parse_count("--top", *top, 1'000'000) : 10;

  std::vector<report::RunProfile> before, after;
  try {
    before = load_runs(paths[0]);
    after = load_runs(paths[1]);
  } catch (const InputError& error) {
    return trace_error(error.path, error.what());
  }
  report::ProfileDiff diff = report::diff_profiles(before, after, stacks);
  fmt::memory_buffer out;
  if (json) render::json_diff(diff, out);
  else render::text_diff(diff, out);
  write_stdout(std::string_view(out.data(), out.size()));
  flush_stdout();
  return kExitOk;
}

}  // namespace

extern const Command diff_command;
const Command diff_command{"diff", "what changed between two runs, by device and by stack", diff_main};

}  // namespace gpumemtrace::cli
