// gpumemtrace phases TRACE: memory by phase (NVTX ranges, gpumemtrace annotations).
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kPhasesHelp =
    "usage: gpumemtrace phases [options] TRACE\n"
    "\n"
    "Memory by phase: the NVTX push/pop ranges and gpumemtrace annotations of each thread. For each phase\n"
    "path (\"step/forward\") and each instance of it (one push to its pop): the most device memory the\n"
    "process had while it was open, what was allocated in it (nested phases included), what of that was\n"
    "still live when it ended, with the stacks that allocated it (the --top largest), and the net growth of\n"
    "live device memory from the end of the previous instance of the same phase to the end of this one.\n";

int phases_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{kPhasesHelp, 10, false, report::build_body<report::phases_report>});
}

}  // namespace

extern const Command phases_command;
const Command phases_command{"phases", "memory by phase: peaks, what each phase left live, growth", phases_main};

}  // namespace gpumemtrace::cli
