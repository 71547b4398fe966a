// gpumemtrace summary TRACE|DIR: the whole story of a trace in one page (or the JSON contract of docs/reports.md).
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kSummaryHelp =
    "usage: gpumemtrace summary [options] TRACE|DIR\n"
    "\n"
    "One page about a trace: per device the peak of device memory (when, and how many allocations were\n"
    "live), what was still allocated at exit, the counts; managed and pinned host memory apart; the\n"
    "largest stacks at the peak, the leaks, the stacks that kept growing, the out-of-memory failures with\n"
    "their verdict, fragmentation where the trace knows it, and the forecast: from the steps seen (the\n"
    "instances of the most repeated phase, else time slices), whether and at which step a device runs out\n"
    "of memory, and the stacks that keep memory per step. Sizes are the bytes the program asked for.\n"
    "The other commands (peak, leaks, growth, oom, fragmentation, timeline) show each part in detail.\n"
    "Where the program's own allocator reported its heaps (annotate.h, the NVTX memory extension), the\n"
    "blocks it handed out count in place of the segments that hold them: --view reserved counts the driver's\n"
    "allocations instead.\n"
    "DIR: every trace in it (one per rank or process): the per-rank table, then the summary of the rank that\n"
    "ran out of memory first, else of the rank with the largest peak (--rank N or all for others).\n";

int summary_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{.usage_and_purpose = kSummaryHelp,
                                        .default_top = 5,
                                        .build = report::build_body<report::summary_report>,
                                        .takes_view = true,
                                        .takes_growth = true,
                                        .ranks = report::RankFocus::FailedOrLargest});
}

}  // namespace

extern const Command summary_command;
const Command summary_command{"summary", "peak, leaks, growth, OOMs, fragmentation and the forecast of a trace", summary_main};

}  // namespace gpumemtrace::cli
