// gpumemtrace leaks TRACE: what the process still held when it exited, grouped by call stack.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace leaks [options] TRACE\n"
    "\n"
    "The allocations still live when the process exited (device memory, managed and pinned host memory),\n"
    "grouped by call stack, largest first. Leaks are only known for a complete trace: for a process that\n"
    "was killed, this lists what was live when the trace stops.\n"
    "Where the program's own allocator reported its heaps (annotate.h, the NVTX memory extension), the\n"
    "blocks it handed out count in place of the segments that hold them: --view reserved counts the driver's\n"
    "allocations instead.\n";

int leaks_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{.usage_and_purpose = kHelp, .build = report::build_body<report::leaks_report>, .takes_view = true});
}

}  // namespace

extern const Command leaks_command;
const Command leaks_command{"leaks", "what was never freed, by call stack", leaks_main};

}  // namespace gpumemtrace::cli
