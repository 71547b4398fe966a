// gpumemtrace growth TRACE: stacks whose live memory keeps rising across the run.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace growth [options] TRACE\n"
    "\n"
    "The call stacks whose live memory keeps rising across the run: the trace from its first allocation\n"
    "to its end is cut into 10 equal time slices, and a stack grows when the least it held in each slice\n"
    "never goes down, rises in at least half of the slices and ends higher than it started (memory\n"
    "accumulated across iterations, like `total_loss += loss`). Memory freed every iteration never counts.\n";

int growth_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{kHelp, 10, false, report::build_body<report::growth_report>});
}

}  // namespace

extern const Command growth_command;
const Command growth_command{"growth", "stacks whose live memory keeps rising", growth_main};

}  // namespace gpumemtrace::cli
