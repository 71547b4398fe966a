#include "analyzer/report/recorded_history.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "analyzer/allocator_model/recorded_settings.h"

namespace gpumemtrace::report {

RecordedHistory::RecordedHistory(const std::string& trace_path, std::span<const sources::NamedSnapshot> named) {
  if (named.empty())
    throw WhatifError("no PyTorch snapshot in this trace: whatif replays PyTorch's history (docs/pytorch.md)");
  std::vector<std::string> unreadable;
  loaded_ = sources::join::load_snapshots(trace_path, named, unreadable);
  if (loaded_.empty()) throw WhatifError(unreadable.empty() ? "no snapshot could be read" : unreadable.front());
  for (sources::join::LoadedSnapshot& s : loaded_) {
    taken_.push_back({&s.snapshot, s.reader.get(), s.named.taken_ns, s.named.taken_wall_ns});
    if (s.snapshot.settings && alloc_conf_.empty()) alloc_conf_ = std::string(s.snapshot.settings->alloc_conf);
  }
  history_ = pytorch::join_histories(taken_);
}

std::vector<sources::NamedSnapshot> RecordedHistory::snapshot_itself(const std::string& path) {
  sources::NamedSnapshot one;
  one.file = std::filesystem::path(path).filename().string();
  one.taken_ns = one.taken_wall_ns = UINT64_MAX / 2;  // its clock is its own
  return {one};
}

std::vector<int32_t> RecordedHistory::devices() const {
  std::set<int32_t> devices;
  for (const pytorch::HistoryStep& step : history_.steps)
    if (step.kind == pytorch::HistoryStep::Kind::Entry) devices.insert(step.device);
  return {devices.begin(), devices.end()};
}

allocator_model::Settings RecordedHistory::recorded_settings(const allocator_model::Settings& base) const {
  auto with_settings =
      std::find_if(loaded_.begin(), loaded_.end(), [](const auto& s) { return s.snapshot.settings.has_value(); });
  if (with_settings == loaded_.end()) return base;
  return allocator_model::recorded_settings(*with_settings->snapshot.settings, base);
}

std::optional<uint64_t> RecordedHistory::time_of(const pytorch::SnapshotEntry* entry) const {
  for (const pytorch::HistoryStep& step : history_.steps)
    if (step.kind == pytorch::HistoryStep::Kind::Entry && &step.entry_of(taken_) == entry) return step.time_ns;
  return std::nullopt;
}

std::vector<std::string> RecordedHistory::stack_of(const pytorch::SnapshotEntry* entry) const {
  std::vector<std::string> out;
  for (const sources::join::LoadedSnapshot& s : loaded_)
    for (const std::vector<pytorch::SnapshotEntry>& trace : s.snapshot.device_traces) {
      if (trace.empty() || entry < trace.data() || entry >= trace.data() + trace.size()) continue;
      if (entry->frames == pytorch::kNoFrames) return out;
      for (const pytorch::SnapshotFrame& frame : s.reader->frames(entry->frames))
        out.push_back(frame.line != 0 ? fmt::format("{} ({}:{})", frame.name, frame.filename, frame.line)
                                      : fmt::format("{} ({})", frame.name, frame.filename));
      return out;
    }
  return out;
}

}  // namespace gpumemtrace::report
