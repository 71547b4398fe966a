#include "analyzer/sources/analysis.h"

#include <algorithm>

namespace gpumemtrace::report {

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

// Reads records (at most `limit`) into on_record(record), telling `progress` now and then.
template <typename OnRecord>
void read_records(trace::Reader& reader, uint64_t limit, const ProgressFn& progress, OnRecord on_record) {
  constexpr uint64_t kProgressEvery = uint64_t{1} << 20;  // records
  uint64_t until_progress = kProgressEvery;
  while (reader.records() < limit) {
    const trace::Record* record = reader.next();
    if (!record) return;
    on_record(*record);
    if (--until_progress == 0) {
      until_progress = kProgressEvery;
      if (progress) progress(reader.stop_offset(), reader.file_size());
    }
  }
}

}  // namespace

Analysis analyze(const std::string& path, const replay::ReplayOptions& options, const ProgressFn& progress) {
  Analysis analysis;
  analysis.source = std::make_shared<const TraceSource>(path);
  std::shared_ptr<trace::Reader> read = analysis.source->reader();
  trace::Reader& reader = *read;
  analysis.options = options;
  analysis.replay = std::make_unique<replay::Replay>(options);
  replay::Replay& replay = *analysis.replay;
  read_records(reader, UINT64_MAX, progress, [&](const trace::Record& record) { replay.on_record(record, reader); });
  replay.finish(reader);

  TraceInfo& info = analysis.trace;
  info.path = path;
  if (const trace::Process* process = reader.process()) {
    info.pid = process->pid;
    info.rank = process->rank;
    info.start_wall_ns = process->start_wall_ns;
    info.command = command_of(*process);
  }
  info.complete = reader.status() == trace::Status::Complete;
  info.corrupt = reader.status() == trace::Status::Corrupt;
  info.error = reader.error();
  info.events = reader.events();
  info.records = reader.records();
  info.stop_offset = reader.stop_offset();
  info.file_size = reader.file_size();
  info.snapshot = analysis.source->snapshot();
  return analysis;
}

void read_again(const Analysis& analysis, replay::Replay& replay, const ProgressFn& progress, const RecordVisit& visit) {
  std::shared_ptr<trace::Reader> read = analysis.source->reader();
  trace::Reader& reader = *read;
  // As many records as the first reading: a trace still being written may have grown since.
  read_records(reader, analysis.trace.records, progress,
               [&](const trace::Record& record) { visit(record, reader, replay); });
  replay.finish(reader);
}

std::unique_ptr<replay::Replay> reread(const Analysis& analysis, replay::ReplayOptions options,
                                       const ProgressFn& progress) {
  for (;;) {
    auto replay = std::make_unique<replay::Replay>(options);
    read_again(analysis, *replay, progress,
               [](const trace::Record& record, const trace::Reader& reader, replay::Replay& replay) {
                 replay.on_record(record, reader);
               });
    const std::vector<uint64_t>& mistakes = replay->mistaken_segments();
    if (mistakes.empty()) return replay;
    auto view = std::make_shared<replay::UsedView>(*options.used_view);
    view->not_segments.insert(view->not_segments.end(), mistakes.begin(), mistakes.end());
    std::sort(view->not_segments.begin(), view->not_segments.end());
    options.used_view = std::move(view);
  }
}

std::vector<std::vector<replay::LiveMoment>> live_moments(const Analysis& analysis, const replay::ReplayOptions& options,
                                                          replay::MomentsPlan plan, const ProgressFn& progress) {
  replay::Replay replay(options);
  replay::LiveMoments moments(std::move(plan));
  read_again(analysis, replay, progress,
             [&](const trace::Record& record, const trace::Reader& reader, replay::Replay& replay) {
               moments.before(replay, reader.time_ns());
               replay.on_record(record, reader);
               moments.after(replay, reader.time_ns());
             });
  return moments.moments();
}

}  // namespace gpumemtrace::report
