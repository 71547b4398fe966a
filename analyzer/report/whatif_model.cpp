#include "analyzer/report/whatif_model.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/report/stack_text.h"
#include "analyzer/symbolize/symbolizer.h"
#include "common/size_units.h"

namespace gpumemtrace::report {
namespace {

using allocator_model::HistoryReplay;
using allocator_model::Settings;
using allocator_model::SettingsError;

constexpr std::string_view kExploreGrid[] = {
    "expandable_segments=True",
    "max_split_size_mb=128",
    "max_split_size_mb=512",
    "roundup_power2_divisions=4",
    "expandable_segments=True,roundup_power2_divisions=4",
    "garbage_collection_threshold=0.8",
};

// "step/forward #3": the phase instance open at `time_ns` that started last (on any thread: the innermost of its
// thread's), or "" when none is.
std::string phase_at(const replay::Replay& replay, uint64_t time_ns) {
  const replay::PhaseInstance* found = nullptr;
  for (const replay::PhaseInstance& instance : replay.phase_instances().instances()) {
    bool open = instance.start_ns <= time_ns &&
                (time_ns < instance.end_ns || (instance.open && time_ns == instance.end_ns));
    if (open && (!found || instance.start_ns >= found->start_ns)) found = &instance;
  }
  return found ? fmt::format("{} #{}", replay.phases().path_text(found->path), found->number) : std::string();
}

// One device's requests and how to replay them: PyTorch's history, or a program's heap blocks.
struct DeviceRequests {
  std::function<HistoryReplay(const Settings&, const allocator_model::HistoryReplayOptions&)> replay;
  std::function<std::vector<std::string>(const pytorch::SnapshotEntry*)> stack_of;
  std::function<std::optional<uint64_t>(const pytorch::SnapshotEntry*)> time_of;
};

class Replays {
 public:
  explicit Replays(const DeviceRequests& requests) : requests_(requests) {}

  // Under the recorded settings on the recorded device: the empty_cache calls the program made are inferred from
  // it, and taken as they are by the replays under other settings.
  HistoryReplay replay_as_recorded(const Settings& settings) {
    HistoryReplay r = requests_.replay(settings, {});
    options_.empty_caches = r.empty_cache_entries;
    return r;
  }
  HistoryReplay replay(const Settings& settings) const { return requests_.replay(settings, options_); }

  WhatifOutcome outcome(std::string name, const Settings& settings) const {
    HistoryReplay r = replay(settings);
    WhatifOutcome out;
    out.name = std::move(name);
    out.peak_reserved = r.counters.peak_reserved;
    out.peak_allocated = r.counters.peak_allocated;
    out.peak_fragmentation = r.peak_fragmentation;
    out.largest_free_at_worst = r.largest_free_at_worst;
    out.device_allocs = r.counters.device_allocs;
    if (r.first_out_of_memory) {
      out.out_of_memory = WhatifOutOfMemory{r.counters.out_of_memory.front(), r.first_out_of_memory->size,
                                            r.first_out_of_memory->stream, requests_.stack_of(r.first_out_of_memory),
                                            requests_.time_of(r.first_out_of_memory), ""};
    }
    out.fits_in = smallest_device(settings, r);
    return out;
  }

 private:
  bool fits(Settings settings, uint64_t memory) const {
    settings.device_memory = memory;
    return replay(settings).counters.out_of_memory.empty();
  }

  // A binary search over the device's memory, in MiB, from what the run holds at once to what it holds with no
  // limit (over the memory fraction), both with the others' memory.
  uint64_t smallest_device(Settings settings, const HistoryReplay& as_is) const {
    settings.device_memory = allocator_model::kUnlimited;
    uint64_t unlimited_peak = replay(settings).counters.peak_reserved;
    double fraction = settings.per_process_memory_fraction.value_or(1.0);
    auto mib = [](double bytes) { return static_cast<uint64_t>(bytes / static_cast<double>(kMiB)) + 1; };
    uint64_t high = mib(static_cast<double>(unlimited_peak) / fraction + static_cast<double>(settings.other_memory));
    // The largest size below what the live tensors need at once: it cannot fit.
    uint64_t needed = (as_is.counters.peak_allocated + kMiB - 1) / kMiB;
    uint64_t low = needed == 0 ? 0 : needed - 1;
    if (!fits(settings, high * kMiB)) return 0;
    while (low + 1 < high) {
      uint64_t middle = low + (high - low) / 2;
      (fits(settings, middle * kMiB) ? high : low) = middle;
    }
    return high * kMiB;
  }

  const DeviceRequests& requests_;
  allocator_model::HistoryReplayOptions options_;
};

}  // namespace

std::span<const std::string_view> explore_grid() { return kExploreGrid; }

Settings apply_scenario(std::string_view scenario, Settings base) {
  // Split at the commas outside brackets (roundup_power2_divisions' list has its own).
  std::string conf;
  size_t depth = 0, begin = 0;
  for (size_t i = 0; i <= scenario.size(); ++i) {
    char c = i < scenario.size() ? scenario[i] : ',';
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c != ',' || depth > 0) continue;
    std::string_view item = scenario.substr(begin, i - begin);
    begin = i + 1;
    size_t equals = item.find_first_of("=:");
    if (item.empty() || equals == std::string_view::npos)
      throw SettingsError(fmt::format("'{}' is not key=value", item));
    std::string_view key = item.substr(0, equals), value = item.substr(equals + 1);
    if (key == "memory") {
      std::optional<uint64_t> size = parse_size(value);
      if (!size || *size == 0) throw SettingsError(fmt::format("memory: '{}' is not a size (like 16GiB)", value));
      base.device_memory = *size;
    } else if (key == "per_process_memory_fraction") {
      char* end = nullptr;
      std::string text(value);
      double fraction = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(fraction > 0 && fraction <= 1))
        throw SettingsError(fmt::format("per_process_memory_fraction: '{}' is not in (0, 1]", value));
      base.per_process_memory_fraction = fraction;
    } else {
      conf += fmt::format("{}{}:{}", conf.empty() ? "" : ",", key, value);
    }
  }
  return allocator_model::parse_alloc_conf(conf, base);
}

namespace {

// `requests` replayed under `recorded` (the settings the run recorded, or PyTorch's defaults), then each scenario.
WhatifDevice device_whatif(const DeviceRequests& requests, const Settings& recorded, std::string recorded_name,
                           const WhatifRequest& request) {
  WhatifDevice out;
  out.device_memory = recorded.device_memory == allocator_model::kUnlimited ? 0 : recorded.device_memory;
  Replays replays(requests);
  HistoryReplay as_recorded = replays.replay_as_recorded(recorded);
  out.requests = as_recorded.requests;
  out.recorded_segment_events = as_recorded.recorded.size();
  out.matched_segment_events = as_recorded.first_difference.value_or(as_recorded.recorded.size());
  if (size_t i = out.matched_segment_events; as_recorded.first_difference)
    out.first_difference = fmt::format(
        "recorded {} | model {}", i < as_recorded.recorded.size() ? describe(as_recorded.recorded[i]) : "nothing",
        i < as_recorded.modelled.size() ? describe(as_recorded.modelled[i]) : "nothing");
  out.recorded_peak_reserved = as_recorded.recorded_peak_reserved;
  out.empty_caches = as_recorded.empty_caches;
  out.initial_state_empty = as_recorded.initial_state_empty;

  std::vector<std::pair<std::string, Settings>> scenarios = {{std::move(recorded_name), recorded}};
  for (const std::string& scenario : request.scenarios)
    scenarios.emplace_back(scenario, apply_scenario(scenario, recorded));
  for (uint64_t memory : request.memories) {
    Settings settings = recorded;
    settings.device_memory = memory;
    scenarios.emplace_back("memory=" + format_size(memory), settings);
  }
  if (request.explore)
    for (std::string_view scenario : kExploreGrid) {
      if (scenario.starts_with("garbage_collection") && !recorded.per_process_memory_fraction) continue;
      scenarios.emplace_back(std::string(scenario), apply_scenario(scenario, recorded));
    }
  for (const auto& [name, settings] : scenarios) out.outcomes.push_back(replays.outcome(name, settings));
  for (size_t i = 0; i < request.memories.size(); ++i) out.outcomes[1 + request.scenarios.size() + i].other_device = true;

  // The setting that fits with the least memory; when none does, what holds the memory at the peak.
  for (size_t i = 0; i < out.outcomes.size(); ++i) {
    const WhatifOutcome& o = out.outcomes[i];
    if (o.other_device || o.out_of_memory || o.fits_in == 0) continue;
    if (!out.recommended || o.fits_in < out.outcomes[*out.recommended].fits_in) out.recommended = i;
  }
  if (!out.recommended) {
    uint64_t live = out.outcomes[0].peak_allocated;
    std::optional<uint64_t> allowed = recorded.allowed_maximum();
    uint64_t room = allowed.value_or(out.device_memory);
    out.none_fits_because =
        live > room ? fmt::format("live tensors: {} at once, more than the {} the allocator may hold; no setting of "
                                  "the cache fits them",
                                  format_size(live), format_size(room))
                    : fmt::format("the cache: live tensors peak at {}, less than the {} the allocator may hold, but "
                                  "no scenario asked for packs them in",
                                  format_size(live), format_size(room));
  }
  return out;
}

}  // namespace

WhatifModel whatif_report(const std::string& path, const WhatifRequest& request) {
  WhatifModel model;
  Recorded recorded = read_recorded(path, model.passes);
  if (recorded.named.empty() && recorded.heaps.empty())
    throw WhatifError("no PyTorch snapshot and no block of a sub-allocator's heap in this trace: whatif replays "
                      "PyTorch's history or the blocks annotate.h or NVTX recorded (docs/whatif.md)");

  model.path = path;
  model.memory_fraction = request.memory_fraction;
  Settings base;
  base.per_process_memory_fraction = request.memory_fraction;
  // The device's memory: --device, else the trace's out-of-memory records of that device.
  auto on_device = [&](int32_t device, std::string& from) {
    Settings settings = base;
    auto total = recorded.device_total.find(device);
    if (request.device_memory) {
      settings.device_memory = *request.device_memory;
      from = "--device";
    } else if (total != recorded.device_total.end() && total->second != 0) {
      settings.device_memory = total->second;
      from = "an out-of-memory record";
    }
    return settings;
  };

  std::optional<RecordedHistory> history;
  if (!recorded.named.empty()) {
    history.emplace(path, recorded.named, model.passes);
    model.alloc_conf = history->alloc_conf();
    for (int32_t device : history->devices()) {
      DeviceRequests requests{
          [&, device](const Settings& s, const allocator_model::HistoryReplayOptions& o) {
            return history->replay(device, s, o);
          },
          [&](const pytorch::SnapshotEntry* entry) { return history->stack_of(entry); },
          [&](const pytorch::SnapshotEntry* entry) { return history->time_of(entry); }};
      std::string from;
      Settings settings = history->recorded_settings(on_device(device, from));
      WhatifDevice out = device_whatif(requests, settings, "recorded settings", request);
      out.device = device;
      out.input_text = "PyTorch's history";
      out.device_memory_from = from;
      model.devices.push_back(std::move(out));
    }
  } else {
    std::optional<symbolize::Symbolizer> symbolizer;  // made for the first request that runs out of memory
    auto heap_stack = [&](replay::StackId stack) {
      if (!symbolizer) symbolizer.emplace(*recorded.stacks, [](std::string_view) {});
      std::vector<std::string> out;
      for (const symbolize::Frame& frame : user_frames(symbolizer->stack(stack))) out.push_back(frame_text(frame));
      return out;
    };
    for (const HeapRequests& heaps : recorded.heaps) {
      std::vector<const pytorch::SnapshotEntry*> entries;
      for (const pytorch::SnapshotEntry& entry : heaps.entries) entries.push_back(&entry);
      DeviceRequests requests{
          [&](const Settings& s, const allocator_model::HistoryReplayOptions& o) {
            return allocator_model::replay_entries(entries, s, o);
          },
          [&](const pytorch::SnapshotEntry* entry) {
            return heap_stack(heaps.stacks[static_cast<size_t>(entry - heaps.entries.data())]);
          },
          [&](const pytorch::SnapshotEntry* entry) -> std::optional<uint64_t> {
            return heaps.times_ns[static_cast<size_t>(entry - heaps.entries.data())];
          }};
      std::string from;
      WhatifDevice out = device_whatif(requests, on_device(heaps.device, from), "PyTorch defaults", request);
      out.device = heaps.device;
      out.input = WhatifInput::HeapBlocks;
      out.input_text = heaps.describe();
      out.device_memory_from = from;
      out.recorded_peak_reserved = heaps.peak_heap_memory;
      out.recorded_segment_events = out.matched_segment_events = 0;
      out.first_difference.clear();
      out.not_compared = "the program's own allocator is not PyTorch's: its heaps' memory is compared, not segments";
      model.devices.push_back(std::move(out));
    }
  }

  if (model.devices.empty())
    throw WhatifError("PyTorch's history has no entry to replay: the snapshots have no device_traces "
                      "(_record_memory_history was off, or the older form that keeps a history per block)");

  // The phase of each request that runs out of memory, from the trace's phase records (another reading).
  bool runs_out = false;
  for (const WhatifDevice& d : model.devices)
    for (const WhatifOutcome& o : d.outcomes) runs_out = runs_out || o.out_of_memory.has_value();
  if (!recorded.snapshot_alone && runs_out) {
    analysis::Analysis analysis = analysis::analyze(path, {}, {}, {.join_snapshots = false});
    model.passes.ran(analysis::Pass::First);
    for (WhatifDevice& d : model.devices)
      for (WhatifOutcome& o : d.outcomes)
        if (o.out_of_memory && o.out_of_memory->time_ns)
          o.out_of_memory->phase = phase_at(*analysis.replay, *o.out_of_memory->time_ns);
  }
  return model;
}

}  // namespace gpumemtrace::report
