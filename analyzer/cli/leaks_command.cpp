// gpumemtrace leaks TRACE|DIR: what the process still held when it exited, grouped by call stack.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kLeaksHelp =
    "usage: gpumemtrace leaks [options] TRACE|DIR\n"
    "\n"
    "The allocations still live when the process exited (device memory, managed and pinned host memory),\n"
    "grouped by call stack, largest first. Leaks are only known for a complete trace: for a process that\n"
    "was killed, this lists what was live when the trace stops.\n"
    "Where the program's own allocator reported its heaps (annotate.h, the NVTX memory extension), the\n"
    "blocks it handed out count in place of the segments that hold them: --view reserved counts the driver's\n"
    "allocations instead.\n"
    "DIR: every trace in it (one per rank or process): the per-rank table, then the leaks of the rank that\n"
    "leaked the most (--rank N or all for others).\n";

int leaks_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{.usage_and_purpose = kLeaksHelp,
                                        .default_top = 10,
                                        .build = report::build_body<report::leaks_report>,
                                        .takes_view = true,
                                        .ranks = report::RankFocus::MostLeaked});
}

}  // namespace

extern const Command leaks_command;
const Command leaks_command{"leaks", "what was never freed, by call stack", leaks_main};

}  // namespace gpumemtrace::cli
