#include "analyzer/report/whatif_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/analysis/analysis.h"
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

class Replays {
 public:
  Replays(const RecordedHistory& recorded, int32_t device) : recorded_(recorded), device_(device) {}

  // Under the recorded settings on the recorded device: the empty_cache calls the program made are inferred from
  // it, and taken as they are by the replays under other settings.
  HistoryReplay replay_as_recorded(const Settings& settings) {
    HistoryReplay r = recorded_.replay(device_, settings);
    options_.empty_caches = r.empty_cache_entries;
    return r;
  }
  HistoryReplay replay(const Settings& settings) const { return recorded_.replay(device_, settings, options_); }

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
                                            r.first_out_of_memory->stream, recorded_.stack_of(r.first_out_of_memory),
                                            recorded_.time_of(r.first_out_of_memory), ""};
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
    auto mib = [](double bytes) { return static_cast<uint64_t>(bytes / static_cast<double>(allocator_model::kMiB)) + 1; };
    uint64_t high = mib(static_cast<double>(unlimited_peak) / fraction + static_cast<double>(settings.other_memory));
    uint64_t low = as_is.counters.peak_allocated / allocator_model::kMiB;
    if (!fits(settings, high * allocator_model::kMiB)) return 0;
    while (low + 1 < high) {
      uint64_t middle = low + (high - low) / 2;
      (fits(settings, middle * allocator_model::kMiB) ? high : low) = middle;
    }
    return high * allocator_model::kMiB;
  }

  const RecordedHistory& recorded_;
  int32_t device_;
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

WhatifModel whatif_report(const std::string& path, const WhatifRequest& request) {
  Recorded recorded = read_recorded(path);
  RecordedHistory history(path, recorded.named);

  WhatifModel model;
  model.path = path;
  model.device = history.busiest_device();
  model.memory_fraction = request.memory_fraction;
  Settings base;
  base.per_process_memory_fraction = request.memory_fraction;
  if (request.device_memory) {
    model.device_memory = *request.device_memory;
    model.device_memory_from = "--device";
  } else if (recorded.device_total != 0) {
    model.device_memory = recorded.device_total;
    model.device_memory_from = "an out-of-memory record";
  }
  if (model.device_memory != 0) base.device_memory = model.device_memory;
  model.alloc_conf = history.alloc_conf();
  Settings recorded_settings = history.recorded_settings(base);

  Replays replays(history, model.device);
  HistoryReplay as_recorded = replays.replay_as_recorded(recorded_settings);
  model.requests = as_recorded.requests;
  model.recorded_segment_events = as_recorded.recorded.size();
  model.matched_segment_events = as_recorded.first_difference.value_or(as_recorded.recorded.size());
  if (size_t i = model.matched_segment_events; as_recorded.first_difference)
    model.first_difference = fmt::format(
        "recorded {} | model {}", i < as_recorded.recorded.size() ? describe(as_recorded.recorded[i]) : "nothing",
        i < as_recorded.modelled.size() ? describe(as_recorded.modelled[i]) : "nothing");
  model.recorded_peak_reserved = as_recorded.recorded_peak_reserved;
  model.empty_caches = as_recorded.empty_caches;
  model.initial_state_empty = as_recorded.initial_state_empty;

  std::vector<std::pair<std::string, Settings>> scenarios = {{"recorded settings", recorded_settings}};
  for (const std::string& scenario : request.scenarios)
    scenarios.emplace_back(scenario, apply_scenario(scenario, recorded_settings));
  for (uint64_t memory : request.memories) {
    Settings settings = recorded_settings;
    settings.device_memory = memory;
    scenarios.emplace_back("memory=" + format_size(memory), settings);
  }
  if (request.explore)
    for (std::string_view scenario : kExploreGrid) {
      if (scenario.starts_with("garbage_collection") && !recorded_settings.per_process_memory_fraction) continue;
      scenarios.emplace_back(std::string(scenario), apply_scenario(scenario, recorded_settings));
    }
  for (const auto& [name, settings] : scenarios) model.outcomes.push_back(replays.outcome(name, settings));
  for (size_t i = 0; i < request.memories.size(); ++i) model.outcomes[1 + request.scenarios.size() + i].other_device = true;

  // The phase of each request that runs out of memory, from the trace's phase records (another reading).
  auto runs_out = [](const WhatifOutcome& o) { return o.out_of_memory.has_value(); };
  if (!recorded.snapshot_alone && std::any_of(model.outcomes.begin(), model.outcomes.end(), runs_out)) {
    analysis::Analysis analysis = analysis::analyze(path, {}, {}, {.join_snapshots = false});
    for (WhatifOutcome& o : model.outcomes)
      if (o.out_of_memory && o.out_of_memory->time_ns)
        o.out_of_memory->phase = phase_at(*analysis.replay, *o.out_of_memory->time_ns);
  }

  // The setting that fits with the least memory; when none does, what holds the memory at the peak.
  for (size_t i = 0; i < model.outcomes.size(); ++i) {
    const WhatifOutcome& o = model.outcomes[i];
    if (o.other_device || o.out_of_memory || o.fits_in == 0) continue;
    if (!model.recommended || o.fits_in < model.outcomes[*model.recommended].fits_in) model.recommended = i;
  }
  if (!model.recommended) {
    uint64_t live = model.outcomes[0].peak_allocated;
    std::optional<uint64_t> allowed = recorded_settings.allowed_maximum();
    uint64_t room = allowed.value_or(model.device_memory);
    model.none_fits_because =
        live > room ? fmt::format("live tensors: {} at once, more than the {} the allocator may hold; no setting of "
                                  "the cache fits them",
                                  format_size(live), format_size(room))
                    : fmt::format("the cache: live tensors peak at {}, less than the {} the allocator may hold, but "
                                  "no scenario asked for packs them in",
                                  format_size(live), format_size(room));
  }
  return model;
}

}  // namespace gpumemtrace::report
