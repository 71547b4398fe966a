// gpumemtrace growth TRACE: stacks whose live memory keeps rising across the run.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kGrowthHelp =
    "usage: gpumemtrace growth [options] TRACE\n"
    "\n"
    "The call stacks whose live memory keeps rising across the run (memory accumulated across iterations,\n"
    "like `total_loss += loss`). The windows are the instances of a phase when the trace has phases (the\n"
    "top-level phase with the most instances, at least 3, in 10 groups; --phase chooses another), else 10\n"
    "equal time slices from the first allocation. A stack grows when the least it held in each window\n"
    "never goes down, rises in at least half of the windows and ends higher than it started: memory freed\n"
    "every iteration never counts.\n"
    "Where the program's own allocator reported its heaps (annotate.h, the NVTX memory extension), the\n"
    "blocks it handed out count in place of the segments that hold them: --view reserved counts the driver's\n"
    "allocations instead.\n";

int growth_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{
      .usage_and_purpose = kGrowthHelp, .build = report::build_body<report::growth_report>, .takes_view = true, .takes_growth = true});
}

}  // namespace

extern const Command growth_command;
const Command growth_command{"growth", "stacks whose live memory keeps rising", growth_main};

}  // namespace gpumemtrace::cli
