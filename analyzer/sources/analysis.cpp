#include "analyzer/sources/analysis.h"

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

}  // namespace

Analysis analyze(const std::string& path, const replay::ReplayOptions& options, const ProgressFn& progress) {
  trace::Reader reader(path);
  Analysis analysis;
  analysis.replay = std::make_unique<replay::Replay>(options);
  replay::Replay& replay = *analysis.replay;
  constexpr uint64_t kProgressEvery = uint64_t{1} << 20;  // records
  uint64_t until_progress = kProgressEvery;
  while (const trace::Record* record = reader.next()) {
    replay.on_record(*record, reader);
    if (--until_progress == 0) {
      until_progress = kProgressEvery;
      if (progress) progress(reader.stop_offset(), reader.file_size());
    }
  }
  replay.finish(reader);

  TraceInfo& info = analysis.trace;
  info.path = path;
  if (const trace::Process* process = reader.process()) {
    info.pid = process->pid;
    info.rank = process->rank;
    info.command = command_of(*process);
  }
  info.complete = reader.status() == trace::Status::Complete;
  info.corrupt = reader.status() == trace::Status::Corrupt;
  info.error = reader.error();
  info.events = reader.events();
  info.records = reader.records();
  info.stop_offset = reader.stop_offset();
  info.file_size = reader.file_size();
  return analysis;
}

}  // namespace gpumemtrace::report
