// gpumemtrace oom TRACE: each out-of-memory failure, what held the memory then, and why it failed.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace oom [options] TRACE\n"
    "\n"
    "For each allocation that failed with out of memory: the request, the device's free and total memory\n"
    "at that moment, what this process held (live allocations, and memory its pools held unused), what\n"
    "other processes held, the live set grouped by call stack, and a verdict from that evidence with its\n"
    "remedy: the request alone is too large for the device; memory pools held it unused; other processes\n"
    "held it; a stack kept growing; or else the live set is simply too big (see docs/reports.md).\n";

int oom_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{kHelp, 10, false, report::build_body<report::oom_report>});
}

}  // namespace

extern const Command oom_command;
const Command oom_command{"oom", "why allocations ran out of memory, and what to do", oom_main};

}  // namespace gpumemtrace::cli
