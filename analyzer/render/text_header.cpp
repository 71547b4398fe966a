#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "common/size_units.h"
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

void append_history_inconsistencies(fmt::memory_buffer& out, const pytorch::HistoryInconsistencies& bad,
                                    uint64_t unknown_actions) {
  append_not_adding_up(out, "the snapshot's history",
                       {{bad.missing_blocks, "allocations or frees of blocks the snapshot does not have"},
                        {bad.duplicate_blocks, "frees of blocks still live"},
                        {bad.missing_segments, "segments allocated or mapped that the snapshot does not have"},
                        {bad.orphan_blocks, "blocks in no segment (left out)"},
                        {unknown_actions, "entries of an unknown action"}});
}

// Where a snapshot's history begins: before that, only the allocator's state then is known.
void append_snapshot(fmt::memory_buffer& out, const report::TraceHeader& trace) {
  auto o = fmt::appender(out);
  const pytorch::SnapshotInfo& snapshot = *trace.snapshot;
  fmt::format_to(o, "snapshot: {} (a PyTorch memory snapshot{}: {}, {} when it was taken)\n", terminal_text(trace.path),
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
  append_history_inconsistencies(out, snapshot.inconsistencies, snapshot.unknown_actions);
}

// Which PyTorch snapshots were joined to the trace, where their history begins, and what did not join.
void append_joined(fmt::memory_buffer& out, const sources::JoinInfo& joined) {
  auto o = fmt::appender(out);
  if (joined.snapshots.empty()) {
    fmt::format_to(o, "PyTorch snapshots: none joined: the {} the trace names could not be read\n",
                   joined.unreadable.size());
  } else {
    fmt::format_to(o, "PyTorch snapshots joined: ");
    for (size_t i = 0; i < joined.snapshots.size(); ++i) {
      const sources::NamedSnapshot& named = joined.snapshots[i].named;
      fmt::format_to(o, "{}{} ({}, taken at {})", i ? ", " : "", terminal_text(named.file), named.reason_name(),
                     format_time(named.taken_ns));
    }
    fmt::format_to(o, " (--no-snapshots: the trace alone)\n");
    fmt::format_to(o, "PyTorch history: {} from {} on, each once; before that only PyTorch's state then is known; {} "
                      "joined to the trace's allocations\n",
                   counted(joined.events, "event"), format_time(joined.history_begins_ns.value_or(0)),
                   counted(joined.segments, "segment"));
  }
  for (const sources::JoinedSnapshot& snapshot : joined.snapshots)
    if (snapshot.state_changes)
      fmt::format_to(o,
                     "warning: events were lost before the history of {} begins (its ring buffer had wrapped): {} "
                     "segments and blocks were set as it had them then\n",
                     terminal_text(snapshot.named.file), snapshot.state_changes);
  for (const std::string& unreadable : joined.unreadable)
    fmt::format_to(o, "warning: {}: the trace is analyzed without this PyTorch snapshot\n", terminal_text(unreadable));
  if (joined.missing_segments)
    fmt::format_to(o, "warning: PyTorch's history has {} ({}) that the trace does not: left out, with {}\n",
                   counted(joined.missing_segments, "segment"), format_size(joined.missing_segment_bytes),
                   counted(joined.left_out_blocks, "block allocation"));
  if (joined.unmatched_ooms)
    fmt::format_to(o, "note: PyTorch ran out of memory {} where the trace has no failed allocation (a limit of its "
                      "own: torch.cuda.set_per_process_memory_fraction)\n",
                   counted(joined.unmatched_ooms, "time"));
  if (!joined.snapshots.empty() && joined.other_allocations)
    fmt::format_to(o, "note: {} of the trace ({} allocated) outside PyTorch's segments: memory PyTorch does not see "
                      "(cuBLAS, NCCL, ...), or freed before its history begins\n",
                   counted(joined.other_allocations, "device allocation"), format_size(joined.other_bytes));
  append_history_inconsistencies(out, joined.inconsistencies, 0);
}

}  // namespace

void append_trace_header(fmt::memory_buffer& out, const report::TraceHeader& trace) {
  auto o = fmt::appender(out);
  if (trace.snapshot) {
    append_snapshot(out, trace);
    append_inconsistencies(out, trace.inconsistencies);
    return;
  }
  fmt::format_to(o, "trace: {}", terminal_text(trace.path));
  if (trace.pid) fmt::format_to(o, " (pid {}: {})", trace.pid, terminal_text(trace.command));
  out.push_back('\n');
  if (!trace.params.empty()) {
    fmt::format_to(o, "params:");
    for (const RunParam& param : trace.params)
      fmt::format_to(o, " {}={}", terminal_text(param.name), terminal_text(param.value));
    out.push_back('\n');
  }
  if (trace.complete)
    fmt::format_to(o, "complete: {} events over {}\n", trace.events, format_time(trace.span_ns));
  else
    fmt::format_to(o,
                   "INCOMPLETE: the trace stops at {} without the process's normal exit (killed, crashed or still "
                   "running); analyzed up to its last event: {} events over {}\n",
                   format_time(trace.end_ns), trace.events, format_time(trace.span_ns));
  append_inconsistencies(out, trace.inconsistencies);
  if (trace.joined) append_joined(out, *trace.joined);
}

void append_view(fmt::memory_buffer& out, const report::ReportView& view) {
  if (view.heaps == 0) return;
  auto o = fmt::appender(out);
  if (view.pytorch) {
    if (view.view == report::View::Used)
      fmt::format_to(o, "view: used: the tensors (PyTorch's blocks) count, not PyTorch's {} that hold them "
                        "(--view reserved: the driver's allocations)\n", counted(view.heaps, "segment"));
    else
      fmt::format_to(o, "view: reserved: the driver's allocations, PyTorch's {} whole (--view used: the tensors in "
                        "them instead)\n", counted(view.heaps, "segment"));
    return;
  }
  std::string heaps = view.heaps == 1 ? std::string("heap") : fmt::format("{} heaps", view.heaps);
  if (view.view == report::View::Used)
    fmt::format_to(o, "view: used: the blocks of the program's {} count, not the segments that hold them "
                      "(--view reserved: the driver's allocations)\n", heaps);
  else
    fmt::format_to(o, "view: reserved: the driver's allocations, the segments of the program's {} whole "
                      "(--view used: their blocks instead)\n", heaps);
}

}  // namespace gpumemtrace::render
