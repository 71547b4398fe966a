// gpumemtrace html TRACE -o report.html: one self-contained page with everything the other reports say,
// and the live set at any moment of the timeline.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHtmlHelp =
    "usage: gpumemtrace html [options] -o FILE TRACE\n"
    "\n"
    "Writes one HTML file that a browser opens offline (nothing is fetched; attach it to a bug report):\n"
    "a zoomable timeline of each device's live memory with the peak, the out-of-memory failures and the\n"
    "phases marked; a click on it shows what was live at that moment, as an icicle of call stacks and as a\n"
    "sortable table; the leaks and the growing stacks as collapsible trees; each out-of-memory failure with\n"
    "its verdict and evidence; the phases and fragmentation. The page keeps at most 256 moments per device,\n"
    "each with its 100 largest stacks, so its size does not grow with the number of events; the trace is\n"
    "read twice. --top and --min-size apply to the peak, leak, growth and OOM lists (default --top 20).\n"
    "Where the program's own allocator reported its heaps (annotate.h, the NVTX memory extension), the\n"
    "blocks it handed out count in place of the segments that hold them: --view reserved counts the driver's\n"
    "allocations instead.\n";

int html_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{.usage_and_purpose = kHtmlHelp,
                                        .default_top = 20,
                                        .build = report::build_body<report::viewer_report>,
                                        .default_format = "html",
                                        .needs_output_file = true,
                                        .takes_view = true,
                                        .takes_growth = true});
}

}  // namespace

extern const Command html_command;
const Command html_command{"html", "one self-contained interactive HTML page about a trace", html_main};

}  // namespace gpumemtrace::cli
