#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"

namespace gpumemtrace::render {

namespace {

void append_inconsistencies(fmt::memory_buffer& out, const replay::Inconsistencies& bad) {
  auto o = fmt::appender(out);
  std::pair<uint64_t, std::string_view> counts[] = {
      {bad.unknown_frees, "frees of addresses never allocated"},
      {bad.double_frees, "double frees"},
      {bad.reallocated_live, "allocations at an address still live (a free missing)"},
      {bad.unknown_unmaps, "unmaps of ranges never mapped"},
      {bad.unmatched_failed_frees, "refused frees that match no free"},
  };
  if (bad.total() > 0) {
    fmt::format_to(o, "warning: the trace does not add up in {} places, counted and skipped:", bad.total());
    for (auto [count, what] : counts)
      if (count) fmt::format_to(o, " {} {};", count, what);
    out.resize(out.size() - 1);
    out.push_back('\n');
  }
  if (bad.refused_invalid_frees)
    fmt::format_to(o, "note: the program freed {} addresses that were not live; the driver refused them\n",
                   bad.refused_invalid_frees);
  if (bad.restored_allocations)
    fmt::format_to(o, "note: the driver refused {} frees; those allocations stayed live\n", bad.restored_allocations);
}

}  // namespace

void append_trace_header(fmt::memory_buffer& out, const report::TraceHeader& trace) {
  auto o = fmt::appender(out);
  fmt::format_to(o, "trace: {}", trace.path);
  if (trace.pid) fmt::format_to(o, " (pid {}: {})", trace.pid, trace.command);
  out.push_back('\n');
  if (trace.complete)
    fmt::format_to(o, "complete: {} events over {}\n", trace.events, format_time(trace.span_ns));
  else
    fmt::format_to(o,
                   "INCOMPLETE: the trace stops at {} without the process's normal exit (killed, crashed or still "
                   "running); analyzed up to its last event: {} events over {}\n",
                   format_time(trace.end_ns), trace.events, format_time(trace.span_ns));
  append_inconsistencies(out, trace.inconsistencies);
}

void append_view(fmt::memory_buffer& out, const report::ReportView& view) {
  if (view.heaps == 0) return;
  auto o = fmt::appender(out);
  std::string heaps = view.heaps == 1 ? std::string("heap") : fmt::format("{} heaps", view.heaps);
  if (view.view == report::View::Used)
    fmt::format_to(o, "view: used: the blocks of the program's {} count, not the segments that hold them "
                      "(--view reserved: the driver's allocations)\n", heaps);
  else
    fmt::format_to(o, "view: reserved: the driver's allocations, the segments of the program's {} whole "
                      "(--view used: their blocks instead)\n", heaps);
}

}  // namespace gpumemtrace::render
