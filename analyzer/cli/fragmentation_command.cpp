// gpumemtrace fragmentation TRACE: memory held by allocators but not in use (async pools, VMM, heaps).
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_command.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kFragmentationHelp =
    "usage: gpumemtrace fragmentation [options] TRACE\n"
    "\n"
    "Memory that allocators held but did not use, where the trace knows both views: stream-ordered memory\n"
    "pools (reserved vs used, from cuMemPoolTrimTo and from what the tracer records at out-of-memory\n"
    "failures) and VMM (physical memory from cuMemCreate vs the part of it mapped). For each out-of-memory\n"
    "failure: internal (rounding) and external (free space in the pools) fragmentation, and whether the\n"
    "request would have fit in free memory plus the pools' unused memory. A program's own allocator that\n"
    "reports its heaps and blocks (annotate.h, the NVTX memory extension) adds, per heap, reserved vs\n"
    "allocated, internal and external waste, the largest free block and 1 - largest free / total free, and\n"
    "for each failure whether the request would have fit in the largest free block of a heap. The figures\n"
    "are those at the end of the trace, or at --to TIME.\n";

int fragmentation_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{
      .usage_and_purpose = kFragmentationHelp, .build = report::build_body<report::fragmentation_report>});
}

}  // namespace

extern const Command fragmentation_command;
const Command fragmentation_command{"fragmentation", "memory held by pools, VMM and heaps but not in use", fragmentation_main};

}  // namespace gpumemtrace::cli
