// gpumemtrace oom TRACE|DIR: each out-of-memory failure, what held the memory then, and why it failed.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kOomHelp =
    "usage: gpumemtrace oom [options] TRACE|DIR\n"
    "\n"
    "For each allocation that failed with out of memory: the request, the device's free and total memory\n"
    "at that moment, what this process held (live allocations, and memory its pools held unused), what\n"
    "other processes held, the live set grouped by call stack, and a verdict from that evidence with its\n"
    "remedy: the request alone is too large for the device; memory pools held it unused; other processes\n"
    "held it; a stack kept growing; or else the live set is simply too big (see docs/reports.md).\n"
    "DIR: every trace in it (one per rank or process): the per-rank table, then the failures of the rank\n"
    "that ran out of memory first, by the wall clock (--rank N or all for others).\n";

int oom_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{.usage_and_purpose = kOomHelp,
                                        .default_top = 10,
                                        .build = report::build_body<report::oom_report>,
                                        .ranks = report::RankFocus::FirstFailed});
}

}  // namespace

extern const Command oom_command;
const Command oom_command{"oom", "why allocations ran out of memory, and what to do", oom_main};

}  // namespace gpumemtrace::cli
