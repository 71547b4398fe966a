#include "analyzer/report/recorded_history.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <variant>

#include <fmt/format.h>

#include "analyzer/allocator_model/recorded_settings.h"
#include "analyzer/report/stack_text.h"
#include "analyzer/sources/trace_source.h"

namespace gpumemtrace::report {

Recorded read_recorded(const std::string& path, analysis::PassCounts& passes) try {
  Recorded out;
  if (sources::TraceSource::holds_snapshot(path)) {  // read once, as the history (not made into a trace first)
    out.named = RecordedHistory::snapshot_itself(path);
    out.snapshot_alone = true;
    return out;
  }
  std::shared_ptr<trace::Reader> reader = sources::TraceSource(path).reader();
  passes.ran(analysis::Pass::Recorded);
  HeapRequestsReader heaps;
  out.stacks = std::make_shared<replay::StackTable>();
  auto total = [&](int32_t device, uint64_t bytes) {
    out.device_total[device] = std::max(out.device_total[device], bytes);
  };
  while (const trace::Record* record = reader->next()) {
    if (const auto* snapshot = std::get_if<trace::TorchSnapshot>(record)) {
      out.named.push_back(sources::NamedSnapshot::of(*snapshot));
      total(snapshot->device, snapshot->device_total);
    } else if (const auto* failed = std::get_if<trace::AllocFailed>(record)) {
      total(failed->device, failed->device_total);
    } else if (const auto* block = std::get_if<trace::SubAlloc>(record)) {
      heaps.on(*block, out.stacks->intern(*reader, block->stack));
    } else {
      std::visit(
          [&](const auto& r) {
            if constexpr (requires { heaps.on(r); }) heaps.on(r);
          },
          *record);
    }
  }
  if (out.named.empty()) out.heaps = heaps.take();
  return out;
} catch (const WhatifError&) {
  throw;
} catch (const std::exception& error) {
  throw WhatifError(error.what());
}

RecordedHistory RecordedHistory::load(const std::string& path, analysis::PassCounts& passes) {
  return RecordedHistory(path, read_recorded(path, passes).named, passes);
}

RecordedHistory::RecordedHistory(const std::string& trace_path, std::span<const sources::NamedSnapshot> named,
                                 analysis::PassCounts& passes) {
  if (named.empty())
    throw NoHistoryError("no PyTorch snapshot in this trace: whatif replays PyTorch's history (docs/pytorch.md)");
  passes.ran(analysis::Pass::History);
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

int32_t RecordedHistory::busiest_device() const {
  std::map<int32_t, uint64_t> entries;
  for (const pytorch::HistoryStep& step : history_.steps)
    if (step.kind == pytorch::HistoryStep::Kind::Entry) ++entries[step.device];
  auto most = std::max_element(entries.begin(), entries.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return most == entries.end() ? 0 : most->first;
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
  for (const sources::join::LoadedSnapshot& s : loaded_)
    for (const pytorch::EntryArray<pytorch::SnapshotEntry>& trace : s.snapshot.device_traces) {
      if (trace.empty() || entry < trace.data() || entry >= trace.data() + trace.size()) continue;
      if (entry->frames == pytorch::kNoFrames) return {};
      std::vector<symbolize::Frame> frames;
      for (const pytorch::SnapshotFrame& frame : s.reader->frames(entry->frames)) {
        symbolize::Frame& f = frames.emplace_back();
        f.function = frame.name;
        f.file = frame.filename == "??" ? std::string_view() : frame.filename;
        f.line = frame.line <= UINT32_MAX ? static_cast<uint32_t>(frame.line) : 0;
        if (frame.is_python()) f.kind = symbolize::FrameKind::Python;
      }
      std::vector<std::string> out;
      for (const symbolize::Frame& frame : user_frames(frames)) out.push_back(frame_text(frame));
      return out;
    }
  return {};
}

}  // namespace gpumemtrace::report
