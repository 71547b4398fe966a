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
    "was killed, this lists what was live when the trace stops.\n";

int leaks_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{kHelp, 10, false, report::build_body<report::leaks_report>});
}

}  // namespace

extern const Command leaks_command;
const Command leaks_command{"leaks", "what was never freed, by call stack", leaks_main};

}  // namespace gpumemtrace::cli
