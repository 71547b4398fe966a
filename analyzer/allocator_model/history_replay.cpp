#include "analyzer/allocator_model/history_replay.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "common/address_map.h"

namespace gpumemtrace::allocator_model {
namespace {

using pytorch::SnapshotEntry;
using Action = pytorch::schema::Action;

std::optional<SegmentEvent::Kind> segment_kind(Action action) {
  switch (action) {
    case Action::SegmentAlloc: return SegmentEvent::Kind::Alloc;
    case Action::SegmentFree: return SegmentEvent::Kind::Free;
    case Action::SegmentMap: return SegmentEvent::Kind::Map;
    case Action::SegmentUnmap: return SegmentEvent::Kind::Unmap;
    default: return std::nullopt;
  }
}

bool releases(SegmentEvent::Kind kind) { return kind == SegmentEvent::Kind::Free || kind == SegmentEvent::Kind::Unmap; }

// The recorded segments of the malloc being replayed, for the model's new segments to take their addresses.
struct RecordedAddresses {
  std::vector<std::pair<uint64_t, uint64_t>> group;  // (size, address), this malloc's segment_alloc entries
  uint64_t elsewhere = uint64_t{1} << 52;            // for a segment the history does not have
};

SegmentPlacement recorded_placement(const std::shared_ptr<RecordedAddresses>& recorded) {
  return {[recorded](uint64_t size) {
            auto& group = recorded->group;
            auto it = std::find_if(group.begin(), group.end(), [&](const auto& s) { return s.first == size; });
            if (it == group.end()) {
              uint64_t address = recorded->elsewhere;
              recorded->elsewhere += size;
              return address;
            }
            uint64_t address = it->second;
            group.erase(it);
            return address;
          },
          [](uint64_t, uint64_t) {}};
}

class Replayer {
 public:
  Replayer(const Settings& settings, const HistoryReplayOptions& options, HistoryReplay& out)
      : addresses_(std::make_shared<RecordedAddresses>()),
        model_(settings, recorded_placement(addresses_)),
        options_(options),
        out_(out) {}

  void run(std::span<const SnapshotEntry* const> entries) {
    for (size_t i = 0; i < entries.size(); ++i) {
      if (options_.last_request && out_.requests > *options_.last_request) break;
      entry_ = i;
      const SnapshotEntry& entry = *entries[i];
      switch (entry.action) {
        case Action::Alloc: malloc(entry, false); break;
        case Action::Oom: malloc(entry, true); break;
        case Action::FreeRequested: {
          bool now = i + 1 < entries.size() && entries[i + 1]->action == Action::FreeCompleted &&
                     entries[i + 1]->address == entry.address;
          free(entry, now);
          if (now) ++i;
          break;
        }
        case Action::Free: free(entry, true); break;
        case Action::FreeCompleted: complete(entry); break;
        case Action::SegmentAlloc:
        case Action::SegmentFree:
        case Action::SegmentMap:
        case Action::SegmentUnmap: segment(entry); break;
        default: break;  // snapshot markers
      }
    }
    entry_ = entries.size();
    between_requests();
    out_.counters = model_.counters();
    out_.modelled = model_.events();
  }

 private:
  // Releases recorded since the last request, before any new segment: an empty_cache, unless the coming malloc
  // (size, stream) makes them itself.
  // Under other settings, the calls inferred under the recorded ones (options_.empty_caches) are made instead.
  void between_requests(std::optional<std::pair<uint64_t, uint64_t>> coming = std::nullopt) {
    bool empty_cache = false;
    if (options_.empty_caches) {
      const std::vector<size_t>& at = *options_.empty_caches;
      while (next_given_ < at.size() && at[next_given_] < entry_) ++next_given_;
      empty_cache = next_given_ < at.size() && at[next_given_] == entry_;
    } else {
      empty_cache = released_before_alloc_ && (!coming || !model_.malloc_would_release(coming->first, coming->second));
    }
    if (empty_cache) {
      model_.empty_cache();
      ++out_.empty_caches;
      out_.empty_cache_entries.push_back(entry_);
    }
    released_before_alloc_ = false;
    segment_since_request_ = false;
    grew_since_request_ = false;
  }

  void malloc(const SnapshotEntry& entry, bool recorded_failure) {
    between_requests(std::pair{entry.size, entry.stream});
    if (recorded_failure) out_.recorded_out_of_memory.push_back(out_.requests);
    ++out_.requests;
    std::optional<BlockId> block = model_.malloc(entry.size, entry.stream);
    if (!block && !out_.first_out_of_memory) {
      out_.first_out_of_memory = &entry;
      out_.largest_free_at_worst = model_.largest_free_block();
    }
    addresses_->group.clear();
    if (block && !recorded_failure) live_.insert_or_assign(entry.address, *block);
    for (BlockId id : complete_after_malloc_) model_.complete(id);
    complete_after_malloc_.clear();
    note_fragmentation();
  }

  // A new peak of reserved - allocated is the worst moment so far, unless a request already failed.
  void note_fragmentation() {
    const Counters& counters = model_.counters();
    uint64_t fragmentation = counters.reserved - counters.allocated;
    if (fragmentation <= out_.peak_fragmentation) return;
    out_.peak_fragmentation = fragmentation;
    if (!out_.first_out_of_memory) out_.largest_free_at_worst = model_.largest_free_block();
  }

  void free(const SnapshotEntry& entry, bool now) {
    between_requests();
    BlockId block = 0;
    if (!live_.erase(entry.address, &block)) {
      ++out_.unknown_frees;
      return;
    }
    if (now) {
      model_.free(block);
      note_fragmentation();
    } else {
      model_.free_later(block);
      pending_.insert_or_assign(entry.address, block);
    }
  }

  // A record_stream block's events completed: at the start of a malloc (before any segment entry of it), or in
  // a synchronization within it, which the model's own malloc makes (else the block is freed after it).
  void complete(const SnapshotEntry& entry) {
    BlockId block = 0;
    if (!pending_.erase(entry.address, &block)) return;
    if (segment_since_request_) {
      complete_after_malloc_.push_back(block);
    } else {
      model_.complete(block);
      note_fragmentation();
    }
  }

  void segment(const SnapshotEntry& entry) {
    SegmentEvent::Kind kind = *segment_kind(entry.action);
    out_.recorded.push_back({kind, entry.address, entry.size, entry.stream, out_.requests});
    reserved_ = releases(kind) ? reserved_ - std::min(reserved_, entry.size) : reserved_ + entry.size;
    out_.recorded_peak_reserved = std::max(out_.recorded_peak_reserved, reserved_);
    if (kind == SegmentEvent::Kind::Alloc) addresses_->group.emplace_back(entry.size, entry.address);
    if (releases(kind) && !grew_since_request_) released_before_alloc_ = true;
    if (!releases(kind)) grew_since_request_ = true;
    segment_since_request_ = true;
  }

  std::shared_ptr<RecordedAddresses> addresses_;
  Allocator model_;
  const HistoryReplayOptions& options_;
  HistoryReplay& out_;
  size_t entry_ = 0;       // the entry being replayed (entries.size() at the end)
  size_t next_given_ = 0;  // in options_.empty_caches
  AddressMap<BlockId> live_;     // by recorded address
  AddressMap<BlockId> pending_;  // freed later, by recorded address
  std::vector<BlockId> complete_after_malloc_;
  bool released_before_alloc_ = false;
  bool segment_since_request_ = false;
  bool grew_since_request_ = false;
  uint64_t reserved_ = 0;
};

}  // namespace

HistoryReplay replay_history(std::span<const pytorch::TakenSnapshot> snapshots, const pytorch::JoinedHistory& history,
                             int32_t device, const Settings& settings, const HistoryReplayOptions& options) {
  std::vector<const SnapshotEntry*> entries;
  bool first = true, initial_state_empty = true;
  for (const pytorch::HistoryStep& step : history.steps) {
    if (step.device != device) continue;
    if (step.kind == pytorch::HistoryStep::Kind::State) {
      if (first && !history.states[step.state].segments.empty()) initial_state_empty = false;
    } else {
      entries.push_back(&step.entry_of(snapshots));
    }
    first = false;
  }
  HistoryReplay out = replay_entries(entries, settings, options);
  out.initial_state_empty = initial_state_empty;
  return out;
}

HistoryReplay replay_entries(std::span<const pytorch::SnapshotEntry* const> entries, const Settings& settings,
                             const HistoryReplayOptions& options) {
  HistoryReplay out;
  Replayer(settings, options, out).run(entries);
  size_t common = std::min(out.recorded.size(), out.modelled.size());
  for (size_t i = 0; i < common && !out.first_difference; ++i) {
    const SegmentEvent& a = out.recorded[i];
    const SegmentEvent& b = out.modelled[i];
    if (a.kind != b.kind || a.size != b.size || a.stream != b.stream) out.first_difference = i;
  }
  if (!out.first_difference && out.recorded.size() != out.modelled.size()) out.first_difference = common;
  return out;
}

std::optional<OomRequest> oom_request_at(std::span<const pytorch::TakenSnapshot> snapshots,
                                       const pytorch::JoinedHistory& history, int32_t device, uint64_t time_ns,
                                       uint64_t slack_ns) {
  uint64_t requests = 0;
  for (const pytorch::HistoryStep& step : history.steps) {
    if (step.device != device || step.kind != pytorch::HistoryStep::Kind::Entry) continue;
    const SnapshotEntry& entry = step.entry_of(snapshots);
    Action action = entry.action;
    if (action == Action::Oom && step.time_ns + slack_ns >= time_ns) return OomRequest{requests, &entry};
    if (action == Action::Alloc || action == Action::Oom) ++requests;
  }
  return std::nullopt;
}

std::string describe(const SegmentEvent& event) {
  static constexpr const char* kNames[] = {"segment_alloc", "segment_free", "segment_map", "segment_unmap"};
  return fmt::format("{} {} B on stream {:#x} (request {})", kNames[static_cast<int>(event.kind)], event.size,
                     event.stream, event.request);
}

}  // namespace gpumemtrace::allocator_model
