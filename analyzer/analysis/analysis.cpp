#include "analyzer/analysis/analysis.h"

#include <algorithm>
#include <variant>

namespace gpumemtrace::analysis {

namespace {

std::string command_of(const trace::Process& process) {
  if (process.argv.empty()) return std::string(process.executable);
  std::string out;
  for (std::string_view arg : process.argv) {
    if (!out.empty()) out += ' ';
    out += arg;
  }
  return out;
}

void note_param(const trace::Param& param, std::vector<RunParam>& params) {
  auto same = std::find_if(params.begin(), params.end(), [&](const RunParam& p) { return p.name == param.name; });
  if (same != params.end())
    same->value = std::string(param.value);
  else
    params.push_back({std::string(param.name), std::string(param.value)});
}

// Reads every record into on_record(record, reader), telling `progress` now and then.
template <typename OnRecord>
void read_records(sources::SourceRecords& records, const ProgressFn& progress, OnRecord on_record) {
  constexpr uint64_t kProgressEvery = uint64_t{1} << 20;  // records
  uint64_t until_progress = kProgressEvery;
  while (const trace::Record* record = records.next()) {
    on_record(*record, records.reader());
    if (--until_progress == 0) {
      until_progress = kProgressEvery;
      if (progress) progress("reading", records.trace().stop_offset(), records.trace().expected_size());
    }
  }
  if (progress) progress("reading", records.trace().file_size(), records.trace().file_size());
}

// The first reading: into a fresh replay, and the TorchSnapshot records it passes; with the used view read
// alongside when given.
std::unique_ptr<replay::Replay> read_first(const sources::TraceSource& source, uint64_t limit,
                                           const replay::ReplayOptions& options, const ProgressFn& progress,
                                           TraceInfo& info, std::vector<sources::NamedSnapshot>* named,
                                           UsedAlongside* alongside) {
  auto replay = std::make_unique<replay::Replay>(options);
  sources::SourceRecords records = source.records(limit, sources::TraceSource::Unpacked::AsItComes);
  uint64_t until_handover = alongside ? 1 : UINT64_MAX;  // records
  read_records(records, progress, [&](const trace::Record& record, const trace::Reader& reader) {
    replay->on_record(record, reader);
    if (--until_handover == 0) until_handover = alongside->hand_over(*replay);
    if (const auto* param = std::get_if<trace::Param>(&record)) note_param(*param, info.params);
    if (const auto* snapshot = std::get_if<trace::TorchSnapshot>(&record); snapshot && named)
      named->push_back(sources::NamedSnapshot::of(*snapshot));
  });
  if (alongside) alongside->first_ended(*replay);
  const trace::Reader& reader = records.trace();
  replay->finish(reader);
  if (const trace::Process* process = reader.process()) {
    info.pid = process->pid;
    info.rank = process->rank;
    info.start_wall_ns = process->start_wall_ns;
    info.command = command_of(*process);
    info.executable = std::string(process->executable);
    info.argv.assign(process->argv.begin(), process->argv.end());
  }
  info.complete = reader.status() == trace::Status::Complete;
  info.corrupt = reader.status() == trace::Status::Corrupt;
  info.error = reader.error();
  info.events = reader.events();
  info.records = reader.records();
  info.stop_offset = reader.stop_offset();
  info.file_size = reader.file_size();
  return replay;
}

// The used view's options again, with the allocations a used reading took for heap segments by mistake.
replay::ReplayOptions knowing_mistakes(replay::ReplayOptions options, const std::vector<uint64_t>& mistakes) {
  auto view = std::make_shared<replay::UsedView>(*options.used_view);
  view->not_segments.insert(view->not_segments.end(), mistakes.begin(), mistakes.end());
  std::sort(view->not_segments.begin(), view->not_segments.end());
  options.used_view = std::move(view);
  return options;
}

}  // namespace

Analysis analyze(const std::string& path, const replay::ReplayOptions& options, const ProgressFn& progress,
                 const SourceOptions& source_options) {
  Analysis analysis;
  auto source = std::make_shared<sources::TraceSource>(path, progress);
  TraceInfo& info = analysis.trace;
  info.path = path;
  info.snapshot = source->snapshot();
  analysis.options = options;
  analysis.progress = progress;
  std::vector<sources::NamedSnapshot> named;
  bool join = source_options.join_snapshots && !source->snapshot();
  // Read alongside only when it would read what the used view's reading reads: the first reading's options
  // (a listener is told from one thread), and the first reading not read again with snapshots joined.
  if (source_options.used_view_alongside && !options.listener && !options.used_view)
    analysis.used_alongside = std::make_shared<UsedAlongside>(source, options);
  analysis.replay = read_first(*source, UINT64_MAX, options, progress, info, join ? &named : nullptr,
                               analysis.used_alongside.get());
  analysis.passes.ran(Pass::First);
  if (analysis.used_alongside && analysis.used_alongside->started())
    analysis.passes.ran(Pass::UsedView);
  else
    analysis.used_alongside.reset();
  if (!named.empty()) {
    analysis.used_alongside.reset();  // stopped before the source changes
    // Read again with the snapshots' history among the trace's records, as far as the first reading went.
    source->join(sources::join_snapshots(path, named, info.records));
    analysis.passes.ran(Pass::Join);
    info.joined = source->joined()->info;
    if (!source->joined()->records.empty()) {
      analysis.replay = read_first(*source, info.records, options, progress, info, nullptr, nullptr);
      analysis.passes.ran(Pass::Joined);
    }
  }
  analysis.source = std::move(source);
  return analysis;
}

void read_again(const Analysis& analysis, Pass pass, replay::Replay& replay, const ProgressFn& progress,
                const RecordVisit& visit) {
  analysis.passes.ran(pass);
  // As many of the trace's records as the first reading: a trace still being written may have grown since.
  sources::SourceRecords records = analysis.source->records(analysis.trace.records);
  read_records(records, progress ? progress : analysis.progress,
               [&](const trace::Record& record, const trace::Reader& reader) { visit(record, reader, replay); });
  replay.finish(records.trace());
}

std::unique_ptr<replay::Replay> reread(const Analysis& analysis, Pass pass, replay::ReplayOptions options,
                                       const ProgressFn& progress) {
  for (;;) {
    auto replay = std::make_unique<replay::Replay>(options);
    read_again(analysis, pass, *replay, progress,
               [](const trace::Record& record, const trace::Reader& reader, replay::Replay& replay) {
                 replay.on_record(record, reader);
               });
    if (replay->mistaken_segments().empty()) return replay;
    options = knowing_mistakes(options, replay->mistaken_segments());
  }
}

std::unique_ptr<replay::Replay> take_used_alongside(const Analysis& analysis) {
  std::unique_ptr<replay::Replay> replay = analysis.used_alongside ? analysis.used_alongside->take() : nullptr;
  if (!replay || replay->mistaken_segments().empty()) return replay;
  return reread(analysis, Pass::UsedView, knowing_mistakes(replay->options(), replay->mistaken_segments()));
}

std::vector<std::vector<replay::LiveMoment>> live_moments(const Analysis& analysis, const replay::ReplayOptions& options,
                                                          replay::MomentsPlan plan, const ProgressFn& progress) {
  replay::Replay replay(options);
  replay::LiveMoments moments(std::move(plan));
  read_again(analysis, Pass::Moments, replay, progress,
             [&](const trace::Record& record, const trace::Reader& reader, replay::Replay& replay) {
               moments.before(replay, reader.time_ns());
               replay.on_record(record, reader);
               moments.after(replay, reader.time_ns());
             });
  return moments.moments();
}

}  // namespace gpumemtrace::analysis
