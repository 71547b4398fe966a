// gpumemtrace summary TRACE: the whole story of a trace in one page (or the JSON contract of docs/reports.md).
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace summary [options] TRACE\n"
    "\n"
    "One page about a trace: per device the peak of device memory (when, and how many allocations were\n"
    "live), what was still allocated at exit, the counts; managed and pinned host memory apart; the\n"
    "largest stacks at the peak, the leaks, the stacks that kept growing, the out-of-memory failures with\n"
    "their verdict, and fragmentation where the trace knows it. Sizes are the bytes the program asked for.\n"
    "The other commands (peak, leaks, growth, oom, fragmentation, timeline) show each part in detail.\n";

int summary_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{kHelp, 5, false, report::build_body<report::summary_report>});
}

}  // namespace

extern const Command summary_command;
const Command summary_command{"summary", "peak, leaks, growth, OOMs and fragmentation of a trace", summary_main};

}  // namespace gpumemtrace::cli
