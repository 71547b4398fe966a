#include "analyzer/sources/pytorch/joined_history.h"

#include <algorithm>
#include <map>
#include <set>

namespace gpumemtrace::pytorch {

namespace {

using schema::Action;

bool is_memory_entry(const SnapshotEntry& entry) { return entry.action != Action::Snapshot; }

std::span<const SnapshotEntry> trace_of(const Snapshot& snapshot, int32_t device) {
  if (static_cast<size_t>(device) >= snapshot.device_traces.size()) return {};
  return snapshot.device_traces[static_cast<size_t>(device)];
}

std::set<int32_t> devices_of(const Snapshot& snapshot) {
  std::set<int32_t> devices;
  for (const SnapshotSegment& segment : snapshot.segments) devices.insert(segment.device);
  for (size_t device = 0; device < snapshot.device_traces.size(); ++device)
    if (!snapshot.device_traces[device].empty()) devices.insert(static_cast<int32_t>(device));
  return devices;
}

}  // namespace

size_t repeated_entries(std::span<const SnapshotEntry* const> history, std::span<const SnapshotEntry> later) {
  const size_t n = history.size(), m = later.size();
  if (n == 0 || m == 0) return 0;
  // The Z-function of (history reversed, a separator, later reversed): at later's reversed position m - k, the
  // length of the run that reads as history's end, read backwards from later[k - 1].
  const size_t total = n + 1 + m;
  auto at = [&](size_t i) -> const SnapshotEntry* {
    if (i < n) return history[n - 1 - i];
    return i == n ? nullptr : &later[m - 1 - (i - n - 1)];
  };
  auto same = [&](size_t i, size_t j) {
    const SnapshotEntry* a = at(i);
    const SnapshotEntry* b = at(j);
    return a && b && a->same_event(*b);
  };
  std::vector<size_t> z(total, 0);
  for (size_t i = 1, left = 0, right = 0; i < total; ++i) {
    if (i < right) z[i] = std::min(right - i, z[i - left]);
    while (i + z[i] < total && same(z[i], i + z[i])) ++z[i];
    if (i + z[i] > right) {
      left = i;
      right = i + z[i];
    }
  }
  // Runs alike but for the time are checked for it, longest first (a loop repeats its events exactly).
  auto same_times = [&](size_t k) {
    for (size_t j = 0, run = std::min(k, n); j < run; ++j)
      if (!history[n - run + j]->same_time(later[k - run + j])) return false;
    return true;
  };
  for (size_t k = m; k > 0; --k)
    if (z[n + 1 + (m - k)] >= std::min(k, n) && same_times(k)) return k;
  return 0;
}

JoinedHistory join_histories(std::span<const TakenSnapshot> snapshots) {
  JoinedHistory out;
  out.parts.resize(snapshots.size());
  std::map<int32_t, std::vector<const SnapshotEntry*>> history;  // by device: the entries taken so far
  std::map<int32_t, uint64_t> last_ns;                           // by device: the time of the last step
  // The steps are counted first and their vector made once: a long history has millions, and a vector that
  // doubles holds the old copy beside the new.
  std::vector<bool> timed_parts(snapshots.size(), true);
  size_t steps = 0;
  for (uint32_t s = 0; s < snapshots.size(); ++s) {
    SnapshotPart& part = out.parts[s];
    for (const EntryArray<SnapshotEntry>& trace : snapshots[s].snapshot->device_traces)
      for (const SnapshotEntry& entry : trace)
        if (is_memory_entry(entry)) {
          ++part.entries;
          timed_parts[s] = timed_parts[s] && entry.time_us.has_value();
        }
    steps += part.entries + devices_of(*snapshots[s].snapshot).size();
  }
  out.steps.reserve(steps);
  for (uint32_t s = 0; s < snapshots.size(); ++s) {
    const TakenSnapshot& taken = snapshots[s];
    const Snapshot& snapshot = *taken.snapshot;
    SnapshotPart& part = out.parts[s];
    const bool timed = timed_parts[s];
    const int64_t clocks_apart = static_cast<int64_t>(taken.taken_wall_ns - taken.taken_ns);
    auto on_trace_clock = [&](uint64_t time_us) {
      int64_t ns = static_cast<int64_t>(time_us * 1000) - clocks_apart;
      return ns < 0 ? uint64_t{0} : static_cast<uint64_t>(ns);
    };

    for (int32_t device : devices_of(snapshot)) {
      std::span<const SnapshotEntry> entries = trace_of(snapshot, device);
      std::vector<const SnapshotEntry*>& known = history[device];
      size_t repeated = timed ? repeated_entries(known, entries) : entries.size();
      for (size_t i = 0; i < repeated; ++i)
        if (is_memory_entry(entries[i])) ++(timed ? part.repeated : part.untimed);
      std::span<const SnapshotEntry> fresh = entries.subspan(repeated);
      if (timed)
        for (const SnapshotEntry& entry : entries)
          if (is_memory_entry(entry)) {
            uint64_t begins = on_trace_clock(*entry.time_us);
            part.begins_ns = std::min(part.begins_ns.value_or(begins), begins);
            break;
          }

      DeviceState state = dump_state(snapshot, device);
      std::vector<uint64_t> reserved = undo_entries(state, fresh, out.inconsistencies);
      uint64_t& last = last_ns[device];
      auto first = std::find_if(fresh.begin(), fresh.end(), is_memory_entry);
      last = std::max(last, first == fresh.end() ? taken.taken_ns : on_trace_clock(*first->time_us));
      out.steps.push_back({HistoryStep::Kind::State, device, s, 0, 0, out.states.size(), last});
      out.states.push_back(std::move(state));
      for (size_t i = 0; i < fresh.size(); ++i) {
        known.push_back(&fresh[i]);
        if (!is_memory_entry(fresh[i])) continue;
        last = std::max(last, on_trace_clock(*fresh[i].time_us));
        out.steps.push_back({HistoryStep::Kind::Entry, device, s, repeated + i, reserved[i], 0, last});
      }
    }
  }
  // Each device's steps are in time order already: one device's history needs no sort (nor its buffer, as
  // large as the steps).
  auto earlier = [](const HistoryStep& a, const HistoryStep& b) { return a.time_ns < b.time_ns; };
  if (!std::is_sorted(out.steps.begin(), out.steps.end(), earlier))
    std::stable_sort(out.steps.begin(), out.steps.end(), earlier);
  return out;
}

}  // namespace gpumemtrace::pytorch
