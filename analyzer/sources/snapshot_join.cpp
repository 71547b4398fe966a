#include "analyzer/sources/snapshot_join.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "analyzer/sources/snapshot_join_steps.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::sources {

namespace join {

using pytorch::HistoryStep;
using pytorch::OpenedSegment;

std::vector<LoadedSnapshot> load_snapshots(const std::string& trace_path, std::span<const NamedSnapshot> named,
                                           std::vector<std::string>& unreadable) {
  std::vector<LoadedSnapshot> loaded;
  std::filesystem::path directory = std::filesystem::path(trace_path).parent_path();
  for (const NamedSnapshot& snapshot : named) {
    LoadedSnapshot one;
    one.named = snapshot;
    std::string path = (directory / snapshot.file).string();
    // The hook names a file beside the trace; a damaged trace might name another, a FIFO or a symbolic link:
    // neither is opened.
    if (snapshot.file.empty() || snapshot.file.find('/') != std::string::npos) {
      unreadable.push_back(fmt::format("{}: not the name of a file beside the trace", snapshot.file));
      continue;
    }
    std::error_code error;
    std::filesystem::file_status status = std::filesystem::symlink_status(path, error);
    if (!std::filesystem::is_regular_file(status)) {
      unreadable.push_back(fmt::format("{}: {}", path,
                                       !std::filesystem::exists(status)     ? "no such file"
                                       : std::filesystem::is_symlink(status) ? "a symbolic link (not followed)"
                                                                             : "not a regular file"));
      continue;
    }
    try {
      one.file = std::make_unique<trace::MappedFile>(path, trace::MappedFile::Links::NotFollowed);
      trace::MappedFile* file = one.file.get();  // its pages let go of behind the reading, as TraceSource's
      one.reader = std::make_unique<pytorch::SnapshotReader>(
          file->bytes(), [file](uint64_t offset) { file->release_before(offset); });
      one.snapshot = one.reader->read();
    } catch (const trace::OpenError& error) {
      unreadable.push_back(fmt::format("{}: {}", path, error.what()));
      continue;
    } catch (const pytorch::PickleError& error) {
      unreadable.push_back(fmt::format("{}: not a PyTorch memory snapshot: {}", path, error.what()));
      continue;
    } catch (const pytorch::SnapshotError& error) {
      unreadable.push_back(fmt::format("{}: {}", path, error.what()));
      continue;
    }
    loaded.push_back(std::move(one));
  }
  return loaded;
}


uint64_t take_step(pytorch::HistoryWriter& writer, const pytorch::JoinedHistory& history,
                   std::span<const pytorch::TakenSnapshot> taken, const HistoryStep& step, uint64_t time_ns,
                   pytorch::HistoryInconsistencies& bad) {
  pytorch::SnapshotReader& frames = *taken[step.snapshot].frames;
  if (step.kind == HistoryStep::Kind::State)
    return writer.set_state(step.device, history.states[step.state], frames, time_ns, bad);
  writer.forward(step.device, step.entry_of(taken), step.reserved, frames, time_ns, bad);
  return 0;
}

OpenedSegments open_segments(const pytorch::JoinedHistory& history, std::span<const pytorch::TakenSnapshot> taken) {
  OpenedSegments out;
  out.state_changes.assign(taken.size(), 0);
  const std::vector<HistoryStep>& steps = history.steps;
  size_t current = 0;
  pytorch::HistoryWriter dry(
      {.driver_records = false},
      [&](const OpenedSegment& segment) {
        out.instances.push_back({segment, current});
        return true;
      },
      [&](uint64_t ordinal, uint64_t time_ns) { out.instances[ordinal].closed_ns = time_ns; });
  pytorch::HistoryInconsistencies ignored;
  std::set<int32_t> begun;
  for (; current < steps.size(); ++current) {
    uint64_t changes = take_step(dry, history, taken, steps[current], steps[current].time_ns, ignored);
    if (steps[current].kind == HistoryStep::Kind::State && !begun.insert(steps[current].device).second)
      out.state_changes[steps[current].snapshot] += changes;
  }
  return out;
}

TraceFacts read_trace(const std::string& path, uint64_t limit, std::span<const Instance> instances,
                      std::span<const HistoryStep> steps) {
  // The candidates: pointer allocations of a segment's address and size, mappings inside an expandable one.
  std::set<std::pair<uint64_t, uint64_t>> ranges;
  std::map<uint64_t, uint64_t> expandable;  // start -> end, merged
  for (const Instance& instance : instances) {
    uint64_t address = instance.opened.address, end = address + instance.opened.size;
    ranges.emplace(address, instance.opened.size);
    if (!instance.opened.expandable) continue;
    auto it = expandable.upper_bound(address);
    if (it != expandable.begin() && std::prev(it)->second >= address) {
      --it;
    } else {
      it = expandable.emplace(address, end).first;
    }
    it->second = std::max(it->second, end);
    for (auto next = std::next(it); next != expandable.end() && next->first <= it->second;) {
      it->second = std::max(it->second, next->second);
      next = expandable.erase(next);
    }
  }
  auto inside_expandable = [&](uint64_t address, uint64_t size) {
    auto it = expandable.upper_bound(address);
    return it != expandable.begin() && address + size <= std::prev(it)->second;
  };

  TraceFacts facts;
  facts.step_records.resize(steps.size());
  std::unordered_map<uint64_t, size_t> live_pointers, live_mappings;  // address -> lifetime
  size_t step = 0;
  trace::Reader reader(path);
  while (reader.records() < limit) {
    const trace::Record* record = reader.next();
    if (!record) break;
    const uint64_t n = reader.records();
    if (const auto* event = std::visit(
            [](const auto& r) -> const trace::Event* {
              if constexpr (trace::kIsEvent<std::decay_t<decltype(r)>>) return &r;
              return nullptr;
            },
            *record)) {
      for (; step < steps.size() && steps[step].time_ns < event->time_ns; ++step) facts.step_records[step] = n - 1;
    }
    if (const auto* alloc = std::get_if<trace::Alloc>(record)) {
      if (format::memory_category(alloc->kind()) != format::MemoryCategory::Device) continue;
      ++facts.device_allocations;
      facts.device_bytes += alloc->size;
      if (alloc->kind() == trace::MemoryKind::VmmPhysical) {
        facts.vmm[alloc->address] = {alloc->device, alloc->size};
      } else if (ranges.contains({alloc->address, alloc->size})) {
        live_pointers[alloc->address] = facts.lifetimes.size();
        facts.lifetimes.push_back({alloc->device, alloc->address, alloc->size, 0, n, alloc->time_ns});
      }
    } else if (const auto* free = std::get_if<trace::Free>(record);
               free && free->kind() != trace::MemoryKind::VmmPhysical && free->kind() != trace::MemoryKind::Array) {
      if (auto it = live_pointers.find(free->address); it != live_pointers.end()) {
        facts.lifetimes[it->second].end_ns = free->time_ns;
        live_pointers.erase(it);
      }
    } else if (const auto* map = std::get_if<trace::MemMap>(record)) {
      if (inside_expandable(map->address, map->size)) {
        live_mappings[map->address] = facts.lifetimes.size();
        auto physical = facts.vmm.find(map->handle);
        int32_t device = physical == facts.vmm.end() ? trace::kNoDevice : physical->second.device;
        facts.lifetimes.push_back({device, map->address, map->size, map->handle, n, map->time_ns, UINT64_MAX, true});
      }
    } else if (const auto* unmap = std::get_if<trace::MemUnmap>(record)) {
      if (auto it = live_mappings.find(unmap->address); it != live_mappings.end()) {
        facts.lifetimes[it->second].end_ns = unmap->time_ns;
        live_mappings.erase(it);
      }
    } else if (const auto* failed = std::get_if<trace::AllocFailed>(record)) {
      if (failed->error == format::kErrorOutOfMemory) facts.failures.push_back({failed->device, n, failed->time_ns});
    } else if (const auto* heap = std::get_if<trace::HeapCreate>(record)) {
      facts.max_heap = std::max(facts.max_heap, heap->heap);
    }
  }
  for (; step < steps.size(); ++step) facts.step_records[step] = reader.records();
  return facts;
}


SegmentMatch match_segments(std::span<const Instance> instances, TraceFacts& facts, JoinInfo& info) {
  std::map<std::pair<uint64_t, uint64_t>, std::vector<size_t>> pointers;
  std::multimap<uint64_t, size_t> mappings;
  for (size_t i = 0; i < facts.lifetimes.size(); ++i) {
    const Lifetime& lifetime = facts.lifetimes[i];
    if (lifetime.mapping)
      mappings.emplace(lifetime.address, i);
    else
      pointers[{lifetime.address, lifetime.size}].push_back(i);
  }
  SegmentMatch match;
  match.opens_after.resize(instances.size());
  match.kept.assign(instances.size(), false);
  for (size_t i = 0; i < instances.size(); ++i) {
    const OpenedSegment& segment = instances[i].opened;
    uint64_t from = segment.time_ns > kClockSlackNs ? segment.time_ns - kClockSlackNs : 0;
    uint64_t closed = instances[i].closed_ns;
    uint64_t to = closed >= UINT64_MAX - kClockSlackNs ? UINT64_MAX : closed + kClockSlackNs;
    std::optional<size_t> best;
    for (size_t candidate : pointers[{segment.address, segment.size}]) {
      const Lifetime& lifetime = facts.lifetimes[candidate];
      if (lifetime.device != segment.device || !lifetime.meets(from, to)) continue;
      if (!best || lifetime.overlap(from, to) > facts.lifetimes[*best].overlap(from, to)) best = candidate;
    }
    std::vector<size_t> pieces;
    if (!best && segment.expandable) {
      uint64_t covered_to = segment.address;
      const uint64_t end = segment.address + segment.size;
      for (auto it = mappings.lower_bound(segment.address);
           it != mappings.end() && it->first <= covered_to && it->first < end; ++it) {
        const Lifetime& piece = facts.lifetimes[it->second];
        if (!piece.meets(from, to) || (piece.device != trace::kNoDevice && piece.device != segment.device)) continue;
        pieces.push_back(it->second);
        covered_to = std::max(covered_to, piece.address + piece.size);
      }
      if (covered_to < end) pieces.clear();
    }
    if (best) pieces.push_back(*best);
    if (pieces.empty()) {
      ++info.missing_segments;
      info.missing_segment_bytes += segment.size;
      continue;
    }
    match.kept[i] = true;
    ++info.segments;
    for (size_t piece : pieces) {
      Lifetime& lifetime = facts.lifetimes[piece];
      lifetime.joined = true;
      if (lifetime.mapping) info.expandable_segments = true;
      if (!match.opens_after[i] || lifetime.begin_record > facts.lifetimes[*match.opens_after[i]].begin_record)
        match.opens_after[i] = piece;
    }
  }
  return match;
}

std::vector<std::optional<size_t>> match_ooms(std::span<const HistoryStep> steps,
                                              std::span<const pytorch::TakenSnapshot> taken,
                                              std::span<const Failure> failures, JoinInfo& info) {
  // PyTorch records the entry once its cudaMalloc and the retries have failed.
  std::vector<std::optional<size_t>> failure_of(steps.size());
  std::map<int32_t, size_t> failures_taken;  // by device: the failures before this one are taken
  std::map<int32_t, uint64_t> previous_ns;   // by device: the time of the entry before
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != HistoryStep::Kind::Entry) continue;
    const int32_t device = steps[i].device;
    const uint64_t since = previous_ns[device] > kClockSlackNs ? previous_ns[device] - kClockSlackNs : 0;
    previous_ns[device] = steps[i].time_ns;
    if (steps[i].entry_of(taken).action != pytorch::schema::Action::Oom) continue;
    size_t& from = failures_taken[device];
    for (size_t f = from; f < failures.size(); ++f) {
      const Failure& failure = failures[f];
      if (failure.time_ns > steps[i].time_ns + kClockSlackNs) break;
      if (failure.device == device && failure.time_ns >= since) failure_of[i] = f;
    }
    if (failure_of[i])
      from = *failure_of[i] + 1;
    else
      ++info.unmatched_ooms;
  }
  return failure_of;
}

Placement place_steps(std::span<const HistoryStep> steps, std::span<const Instance> instances,
                      const SegmentMatch& match, const TraceFacts& facts,
                      std::span<const std::optional<size_t>> failure_of) {
  Placement out;
  out.position.resize(steps.size());
  out.time_ns.resize(steps.size());
  size_t next_instance = 0;
  for (size_t i = 0, floor = 0, floor_ns = 0; i < steps.size(); ++i) {
    uint64_t p = std::max<uint64_t>(facts.step_records[i], floor);
    uint64_t t = std::max<uint64_t>(steps[i].time_ns, floor_ns);
    for (; next_instance < instances.size() && instances[next_instance].step == i; ++next_instance) {
      if (!match.opens_after[next_instance]) continue;
      const Lifetime& allocation = facts.lifetimes[*match.opens_after[next_instance]];
      p = std::max(p, allocation.begin_record);
      t = std::max(t, allocation.begin_ns);
    }
    out.position[i] = floor = p;
    out.time_ns[i] = floor_ns = t;
    if (failure_of[i]) {
      const Failure& failure = facts.failures[*failure_of[i]];
      floor = std::max<uint64_t>(floor, failure.record);
      floor_ns = std::max(floor_ns, failure.time_ns);
    }
  }
  for (size_t i = steps.size(), cap = UINT64_MAX, cap_ns = UINT64_MAX; i-- > 0;) {
    out.position[i] = std::min<uint64_t>(out.position[i], cap);
    out.time_ns[i] = std::min<uint64_t>(out.time_ns[i], cap_ns);
    if (failure_of[i]) {
      const Failure& failure = facts.failures[*failure_of[i]];
      cap = std::min<uint64_t>(cap, failure.record - 1);
      cap_ns = std::min(cap_ns, failure.time_ns);
    }
  }
  return out;
}

void write_history(const pytorch::JoinedHistory& history, std::span<const pytorch::TakenSnapshot> taken,
                   const SegmentMatch& match, const Placement& placement, uint64_t first_heap, SnapshotJoin& out) {
  const std::vector<HistoryStep>& steps = history.steps;
  pytorch::HistoryWriter writer({.driver_records = false, .first_heap = first_heap},
                                [&](const OpenedSegment& segment) { return match.kept[segment.ordinal]; });
  for (size_t i = 0; i < steps.size(); ++i) {
    uint64_t before = writer.events();
    take_step(writer, history, taken, steps[i], placement.time_ns[i], out.info.inconsistencies);
    out.positions.insert(out.positions.end(), writer.events() - before, placement.position[i]);
    if (steps[i].kind == HistoryStep::Kind::Entry) ++out.info.events;
  }
  out.records = writer.take();
  out.info.left_out_blocks = writer.left_out_blocks();
}

void count_other_memory(const TraceFacts& facts, JoinInfo& info) {
  std::set<uint64_t> joined_handles;
  uint64_t joined = 0, joined_bytes = 0;
  for (const Lifetime& lifetime : facts.lifetimes) {
    if (!lifetime.joined) continue;
    if (!lifetime.mapping) {
      ++joined;
      joined_bytes += lifetime.size;
    } else if (auto physical = facts.vmm.find(lifetime.handle);
               physical != facts.vmm.end() && joined_handles.insert(lifetime.handle).second) {
      ++joined;
      joined_bytes += physical->second.size;
    }
  }
  info.other_allocations = facts.device_allocations - std::min(joined, facts.device_allocations);
  info.other_bytes = facts.device_bytes - std::min(joined_bytes, facts.device_bytes);
}

void describe_snapshots(std::span<const LoadedSnapshot> loaded, const pytorch::JoinedHistory& history,
                        std::span<const uint64_t> state_changes, JoinInfo& info) {
  for (size_t s = 0; s < loaded.size(); ++s) {
    info.snapshots.push_back({loaded[s].named, history.parts[s], state_changes[s]});
    if (std::optional<uint64_t> begins = history.parts[s].begins_ns)
      info.history_begins_ns = std::min(info.history_begins_ns.value_or(*begins), *begins);
    if (std::optional<bool> expandable =
            loaded[s].snapshot.settings ? loaded[s].snapshot.settings->expandable_segments : std::nullopt)
      info.expandable_segments = info.expandable_segments.value_or(false) || *expandable;
  }
  if (!info.history_begins_ns && !history.steps.empty()) info.history_begins_ns = history.steps.front().time_ns;
}

}  // namespace join



NamedSnapshot NamedSnapshot::of(const trace::TorchSnapshot& record) {
  return {std::string(record.file), record.reason, record.sequence, record.taken_ns, record.taken_wall_ns};
}

std::string_view NamedSnapshot::reason_name() const {
  return reason < std::size(format::kTorchSnapshotReasonNames) ? format::kTorchSnapshotReasonNames[reason] : "unknown";
}

SnapshotJoin join_snapshots(const std::string& trace_path, std::span<const NamedSnapshot> named,
                            uint64_t trace_records) {
  using namespace join;
  SnapshotJoin out;
  std::vector<LoadedSnapshot> loaded = load_snapshots(trace_path, named, out.info.unreadable);
  if (loaded.empty()) return out;
  std::vector<pytorch::TakenSnapshot> taken;
  for (LoadedSnapshot& snapshot : loaded)
    taken.push_back({&snapshot.snapshot, snapshot.reader.get(), snapshot.named.taken_ns, snapshot.named.taken_wall_ns});
  pytorch::JoinedHistory history = pytorch::join_histories(taken);
  out.info.inconsistencies = history.inconsistencies;
  OpenedSegments opened = open_segments(history, taken);
  TraceFacts facts = read_trace(trace_path, trace_records, opened.instances, history.steps);
  SegmentMatch match = match_segments(opened.instances, facts, out.info);
  std::vector<std::optional<size_t>> failure_of = match_ooms(history.steps, taken, facts.failures, out.info);
  Placement placement = place_steps(history.steps, opened.instances, match, facts, failure_of);
  write_history(history, taken, match, placement, facts.max_heap + 1, out);
  count_other_memory(facts, out.info);
  describe_snapshots(loaded, history, opened.state_changes, out.info);
  return out;
}

}  // namespace gpumemtrace::sources
