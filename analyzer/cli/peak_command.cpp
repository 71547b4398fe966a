// gpumemtrace peak TRACE|DIR: per device, the most device memory the process held and what held it then.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kPeakHelp =
    "usage: gpumemtrace peak [options] TRACE|DIR\n"
    "\n"
    "For each device: the peak of its device memory (cuMemAlloc/cudaMalloc, async pools, VMM physical\n"
    "memory and arrays, in requested bytes), the first time it was reached, and the allocations live then,\n"
    "grouped by call stack, largest first.\n"
    "Where the program's own allocator reported its heaps (annotate.h, the NVTX memory extension), the\n"
    "blocks it handed out count in place of the segments that hold them: --view reserved counts the driver's\n"
    "allocations instead.\n"
    "DIR: every trace in it (one per rank or process): the per-rank table, then the peak of the rank with\n"
    "the largest peak (--rank N or all for others).\n";

int peak_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{.usage_and_purpose = kPeakHelp,
                                        .default_top = 10,
                                        .build = report::build_body<report::peak_report>,
                                        .takes_view = true,
                                        .ranks = report::RankFocus::LargestPeak});
}

}  // namespace

extern const Command peak_command;
const Command peak_command{"peak", "the peak of device memory and the stacks that held it", peak_main};

}  // namespace gpumemtrace::cli
