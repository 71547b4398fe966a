// gpumemtrace timeline TRACE: live memory per device over time, drawn with block characters.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kTimelineHelp =
    "usage: gpumemtrace timeline [options] TRACE\n"
    "\n"
    "Live memory of each device over time (device memory: cuMemAlloc, async pools, VMM physical memory\n"
    "and arrays), and of managed and pinned host memory when there is any, drawn in the terminal from the\n"
    "first allocation to the end of the trace. Each column is the most that was live during its slice of\n"
    "time. --top and --min-size do not apply.\n"
    "Where the program's own allocator reported its heaps (annotate.h, the NVTX memory extension), the\n"
    "blocks it handed out count in place of the segments that hold them: --view reserved counts the driver's\n"
    "allocations instead.\n";

int timeline_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{
      .usage_and_purpose = kTimelineHelp, .takes_width = true, .build = report::build_body<report::timeline_report>, .takes_view = true});
}

}  // namespace

extern const Command timeline_command;
const Command timeline_command{"timeline", "live memory per device over time, as a chart", timeline_main};

}  // namespace gpumemtrace::cli
