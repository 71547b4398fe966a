#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "common/time_units.h"

namespace gpumemtrace::render {

namespace {

using Counts = std::initializer_list<std::pair<uint64_t, std::string_view>>;

// "warning: the trace does not add up in 3 places, counted and skipped: 2 double frees; 1 ...", when any.
void append_not_adding_up(fmt::memory_buffer& out, std::string_view what, Counts counts) {
  uint64_t total = 0;
  for (auto [count, _] : counts) total += count;
  if (total == 0) return;
  auto o = fmt::appender(out);
  fmt::format_to(o, "warning: {} does not add up in {} places, counted and skipped:", what, total);
  for (auto [count, noun] : counts)
    if (count) fmt::format_to(o, " {} {};", count, noun);
  out.resize(out.size() - 1);
  out.push_back('\n');
}

void append_inconsistencies(fmt::memory_buffer& out, const replay::Inconsistencies& bad) {
  auto o = fmt::appender(out);
  append_not_adding_up(out, "the trace",
                       {{bad.unknown_frees, "frees of addresses never allocated"},
                        {bad.double_frees, "double frees"},
                        {bad.reallocated_live, "allocations at an address still live (a free missing)"},
                        {bad.unknown_unmaps, "unmaps of ranges never mapped"},
                        {bad.unmatched_failed_frees, "refused frees that match no free"}});
  if (bad.refused_invalid_frees)
    fmt::format_to(o, "note: the program freed {} addresses that were not live; the driver refused them\n",
                   bad.refused_invalid_frees);
  if (bad.restored_allocations)
    fmt::format_to(o, "note: the driver refused {} frees; those allocations stayed live\n", bad.restored_allocations);
}

// "1 event", "2 events".
std::string counted(uint64_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

// Where a snapshot's history begins: before that, only the allocator's state then is known.
void append_snapshot(fmt::memory_buffer& out, const report::TraceHeader& trace) {
  auto o = fmt::appender(out);
  const pytorch::SnapshotInfo& snapshot = *trace.snapshot;
  fmt::format_to(o, "snapshot: {} (a PyTorch memory snapshot{}: {}, {} when it was taken)\n", trace.path,
                 snapshot.legacy ? " of the older format" : "", counted(snapshot.segments, "segment"),
                 counted(snapshot.blocks, "block"));
  if (snapshot.history_entries == 0)
    fmt::format_to(o, "history: none recorded; the reports show the allocator's state when the snapshot was taken\n");
  else if (snapshot.history_timed)
    fmt::format_to(o, "history: {} from {} to {} ({}); before that only the state then is known\n",
                   counted(snapshot.history_entries, "event"), format_wall_time(snapshot.history_start_wall_ns),
                   format_wall_time(snapshot.history_end_wall_ns),
                   format_time(snapshot.history_end_wall_ns - snapshot.history_start_wall_ns));
  else
    fmt::format_to(o, "history: {}, in order (without times: each counts as 1 µs); before that only the state "
                   "then is known\n",
                   counted(snapshot.history_entries, "event"));
  const pytorch::HistoryInconsistencies& bad = snapshot.inconsistencies;
  append_not_adding_up(out, "the snapshot's history",
                       {{bad.missing_blocks, "allocations or frees of blocks the snapshot does not have"},
                        {bad.duplicate_blocks, "frees of blocks still live"},
                        {bad.missing_segments, "segments allocated or mapped that the snapshot does not have"},
                        {bad.orphan_blocks, "blocks in no segment (left out)"},
                        {snapshot.unknown_actions, "entries of an unknown action"}});
}

}  // namespace

void append_trace_header(fmt::memory_buffer& out, const report::TraceHeader& trace) {
  auto o = fmt::appender(out);
  if (trace.snapshot) {
    append_snapshot(out, trace);
    append_inconsistencies(out, trace.inconsistencies);
    return;
  }
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
