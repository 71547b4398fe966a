// The passes over a trace (passes.h), each made by one of these functions: analyze makes the first reading
// (and the join and joined reading), what every report starts from; read_again, reread and live_moments the
// second readings that the report models and exports ask for.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/replay/live_moments.h"
#include "analyzer/replay/replay.h"
#include "analyzer/analysis/passes.h"
#include "analyzer/analysis/used_alongside.h"
#include "analyzer/sources/trace_source.h"
#include "common/progress_fn.h"
#include "common/run_params.h"

namespace gpumemtrace::analysis {

struct TraceInfo {
  std::string path;
  uint64_t pid = 0;
  int64_t rank = -1;    // the rank the tracer saw (RANK, OMPI_COMM_WORLD_RANK, ...), -1 when unknown
  uint64_t start_wall_ns = 0;  // the wall clock (since the epoch) when the trace's clock was 0; 0 when unknown
  std::string command;  // argv joined by spaces (the executable when argv is empty)
  std::string executable;  // the Process record's
  std::vector<std::string> argv;
  std::vector<RunParam> params;  // the Param records (gpumemtrace run --param), in order, a name once
  bool complete = false;
  bool corrupt = false;
  std::string error;    // what is corrupt, and where
  uint64_t events = 0;
  uint64_t records = 0;
  uint64_t stop_offset = 0;
  uint64_t file_size = 0;
  std::optional<pytorch::SnapshotInfo> snapshot;  // the path is a PyTorch memory snapshot, read as a trace
  std::optional<sources::JoinInfo> joined;  // the PyTorch snapshots the trace names, joined to it (snapshot_join.h)

  // PyTorch's caching allocator is what the heaps are: a snapshot, or a trace with snapshots joined.
  bool heaps_are_pytorch() const { return snapshot || (joined && !joined->snapshots.empty()); }
  // Expandable segments were on, as far as the snapshots say.
  std::optional<bool> expandable_segments() const {
    return snapshot ? snapshot->expandable_segments : joined ? joined->expandable_segments : std::nullopt;
  }
};

// How a path is read.
struct SourceOptions {
  bool join_snapshots = true;  // a trace with the PyTorch snapshots its records name (snapshot_join.h)
  // The used view read on the second processor alongside the first reading (used_alongside.h), for the
  // reports that show it; taken by the first model that asks for the used view (take_used_alongside).
  bool used_view_alongside = false;
};

struct Analysis {
  std::shared_ptr<const sources::TraceSource> source;
  TraceInfo trace;
  replay::ReplayOptions options;  // what the replay was made with
  std::unique_ptr<replay::Replay> replay;
  // The passes made so far: the first ones, and the second readings asked for later (through a const Analysis).
  mutable PassCounts passes;
  ProgressFn progress;  // what analyze() was told: the later readings tell it too
  // The used view read alongside the first reading (SourceOptions::used_view_alongside), until taken.
  std::shared_ptr<UsedAlongside> used_alongside;
};

// Throws trace::OpenError when the file is neither a trace this build can read nor a PyTorch memory
// snapshot (sources::TraceSource). A corrupt trace is read up to the damage and flagged (trace.corrupt, trace.error).
// A trace that names PyTorch snapshots is read once more with them joined (trace.joined says how it went:
// a snapshot that cannot be read is left out, in joined->unreadable). `progress` is told "reading" (how far
// the reader is in the file, of its size; at the end, all of it), and "converting" while a snapshot is made
// into a trace.
Analysis analyze(const std::string& path, const replay::ReplayOptions& options = {}, const ProgressFn& progress = {},
                 const SourceOptions& source = {});

// Called for each record of a second reading, which hands it to the replay itself (replay.on_record).
using RecordVisit =
    std::function<void(const trace::Record& record, const trace::Reader& reader, replay::Replay& replay)>;

// Reads the analyzed trace (or snapshot) again, every record to `visit`, into `replay`, a fresh replay (made
// with the first reading's options, but for the view, the growth windows or a listener: stacks get the same
// ids), which it finishes.
void read_again(const Analysis& analysis, Pass pass, replay::Replay& replay, const ProgressFn& progress,
                const RecordVisit& visit);

// Reads the analyzed trace again, through a fresh replay made with `options` (the first reading's, but
// for the view and the growth windows: stacks get the same ids). For the used view, until no allocation
// was taken for a heap segment by mistake (replay/heap_segments.h): once more at most.
std::unique_ptr<replay::Replay> reread(const Analysis& analysis, Pass pass, replay::ReplayOptions options,
                                       const ProgressFn& progress = {});

// The used view's replay read alongside the first reading (Analysis::used_alongside), once: read again
// knowing the allocations it took for segments by mistake when there are some; nullptr when there is none,
// or it is not the used view's (read it with reread). It has no growth windows of a phase.
std::unique_ptr<replay::Replay> take_used_alongside(const Analysis& analysis);

// Reads the analyzed trace again, through a fresh replay with the options of the replay the plan was made
// from (so stacks and sites get the same ids), to find the live sets of the plan's moments.
std::vector<std::vector<replay::LiveMoment>> live_moments(const Analysis& analysis, const replay::ReplayOptions& options,
                                                          replay::MomentsPlan plan, const ProgressFn& progress = {});

}  // namespace gpumemtrace::analysis
