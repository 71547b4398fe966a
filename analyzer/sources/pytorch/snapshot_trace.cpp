#include "analyzer/sources/pytorch/snapshot_trace.h"

#include <algorithm>
#include <map>
#include <set>

#include "analyzer/sources/pytorch/history_writer.h"
#include "analyzer/sources/pytorch/snapshot_history.h"

namespace gpumemtrace::pytorch {

namespace {

using schema::Action;

// The trace starts with the state when recording began, one µs before the first entry; entries without a
// time are one µs apart (their order only).
constexpr uint64_t kStepNs = 1000;

class Converter {
 public:
  Converter(SnapshotReader& reader, const Snapshot& snapshot, const ProgressFn& progress)
      : reader_(reader), snapshot_(snapshot), progress_(progress) {}

  SnapshotTrace run() {
    SnapshotTrace out;
    SnapshotInfo& info = out.info;
    info.legacy = snapshot_.legacy;
    info.segments = snapshot_.segments.size();
    for (const SnapshotSegment& segment : snapshot_.segments) info.blocks += segment.blocks.size();
    info.unknown_actions = snapshot_.unknown_actions;
    if (snapshot_.settings) info.expandable_segments = snapshot_.settings->expandable_segments;

    std::set<int32_t> devices;
    for (const SnapshotSegment& segment : snapshot_.segments) devices.insert(segment.device);
    for (size_t device = 0; device < snapshot_.device_traces.size(); ++device)
      if (!snapshot_.device_traces[device].empty()) devices.insert(static_cast<int32_t>(device));

    std::optional<uint64_t> first_us = time_entries(info);
    writer_.buffer().spill_to_memory_file();
    writer_.buffer().write(trace::Process{0, 0, info.trace_start_wall_ns, 0, -1, {}, {}, {}});
    // The state when recording began, device by device; then the entries in time order.
    std::map<int32_t, std::vector<uint64_t>> reserved;
    for (int32_t device : devices) {
      DeviceState state = dump_state(snapshot_, device);
      reserved[device] = undo_entries(state, entries(device), info.inconsistencies);
      writer_.set_state(device, state, reader_, 0, info.inconsistencies);
    }
    constexpr uint64_t kProgressEvery = uint64_t{1} << 16;  // entries
    uint64_t converted = 0;
    each_in_time_order(first_us, [&](uint64_t time_ns, int32_t device, size_t index) {
      writer_.forward(device, entries(device)[index], reserved[device][index], reader_, time_ns, info.inconsistencies);
      if (++converted % kProgressEvery == 0 && progress_) progress_("converting", converted, info.history_entries);
    });
    if (progress_) progress_("converting", info.history_entries, info.history_entries);
    out.trace = std::make_shared<const trace::OpenedTrace>(writer_.buffer().take_memory_file());
    return out;
  }

 private:
  std::span<const SnapshotEntry> entries(int32_t device) const {
    if (device < 0 || static_cast<size_t>(device) >= snapshot_.device_traces.size()) return {};
    return snapshot_.device_traces[static_cast<size_t>(device)];
  }

  // Counts the memory entries and finds the first and last entry's wall-clock time; returns the first.
  std::optional<uint64_t> time_entries(SnapshotInfo& info) const {
    std::optional<uint64_t> first_us;
    uint64_t last_us = 0;
    for (const EntryArray<SnapshotEntry>& trace : snapshot_.device_traces)
      for (const SnapshotEntry& entry : trace) {
        if (entry.action != Action::Snapshot) ++info.history_entries;
        if (entry.time_us) {
          first_us = std::min(first_us.value_or(UINT64_MAX), *entry.time_us);
          last_us = std::max(last_us, *entry.time_us);
        }
      }
    if (first_us) {
      info.history_timed = true;
      info.history_start_wall_ns = *first_us * 1000;
      info.history_end_wall_ns = last_us * 1000;
      info.trace_start_wall_ns = info.history_start_wall_ns - kStepNs;
    }
    return first_us;
  }

  // Every memory entry of every device at its time in the trace, in time order (entries of one time in
  // device order): one µs after the start plus the time since the first entry's wall-clock time (never
  // earlier than the entry before it on its device), or one µs apart when there are no times. The entries
  // of a single device are in time order already; those of several are sorted.
  template <typename Step>
  void each_in_time_order(std::optional<uint64_t> first_us, Step step) const {
    auto device_times = [&](size_t device, auto at) {
      uint64_t time_ns = 0;
      const EntryArray<SnapshotEntry>& trace = snapshot_.device_traces[device];
      for (size_t i = 0; i < trace.size(); ++i) {
        if (trace[i].action == Action::Snapshot) continue;
        if (!first_us)
          time_ns = (i + 1) * kStepNs;
        else if (trace[i].time_us)
          time_ns = std::max(time_ns, kStepNs + (*trace[i].time_us - *first_us) * 1000);
        else
          time_ns = std::max(time_ns, kStepNs);
        at(time_ns, static_cast<int32_t>(device), i);
      }
    };
    size_t with_entries = 0;
    for (const EntryArray<SnapshotEntry>& trace : snapshot_.device_traces) with_entries += !trace.empty();
    if (with_entries <= 1) {
      for (size_t device = 0; device < snapshot_.device_traces.size(); ++device) device_times(device, step);
      return;
    }
    struct Timed {
      uint64_t time_ns = 0;
      int32_t device = 0;
      size_t index = 0;
    };
    std::vector<Timed> timed;
    for (size_t device = 0; device < snapshot_.device_traces.size(); ++device)
      device_times(device, [&](uint64_t time_ns, int32_t d, size_t i) { timed.push_back({time_ns, d, i}); });
    std::stable_sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) { return a.time_ns < b.time_ns; });
    for (const Timed& t : timed) step(t.time_ns, t.device, t.index);
  }

  SnapshotReader& reader_;
  const Snapshot& snapshot_;
  const ProgressFn& progress_;
  HistoryWriter writer_{HistoryWriter::Options{}};
};

}  // namespace

SnapshotTrace snapshot_trace(std::span<const uint8_t> bytes, std::function<void(uint64_t offset)> read_to,
                             const ProgressFn& progress) {
  SnapshotReader reader(bytes, std::move(read_to));
  Snapshot snapshot = reader.read();
  return Converter(reader, snapshot, progress).run();
}

}  // namespace gpumemtrace::pytorch
