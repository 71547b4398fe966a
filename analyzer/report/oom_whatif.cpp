#include "analyzer/report/oom_whatif.h"

#include "analyzer/report/whatif_model.h"
#include "analyzer/sources/snapshot_join.h"

namespace gpumemtrace::report {

std::vector<std::string_view> oom_remedies() {
  std::vector<std::string_view> out;
  for (std::string_view scenario : explore_grid())
    if (!scenario.starts_with("garbage_collection")) out.push_back(scenario);
  return out;
}

std::optional<OomWhatif> oom_whatif(const RecordedHistory& history, int32_t device, uint64_t time_ns,
                                    uint64_t device_memory, uint64_t other_memory) {
  std::optional<allocator_model::OomRequest> oom =
      allocator_model::oom_request_at(history.taken(), history.history(), device, time_ns, sources::kClockSlackNs);
  if (!oom) return std::nullopt;
  OomWhatif out;
  out.request = oom->request;
  out.size = oom->entry->size;
  out.device_memory = device_memory;
  out.other_memory = other_memory;
  allocator_model::Settings base;
  base.device_memory = device_memory;
  base.other_memory = other_memory;
  allocator_model::Settings recorded = history.recorded_settings(base);
  // The program's empty_cache calls, as the replay under the recorded settings infers them.
  allocator_model::HistoryReplayOptions options{.last_request = out.request, .empty_caches = std::nullopt};
  auto outcome = [&](std::string setting, const allocator_model::Settings& settings) {
    allocator_model::HistoryReplay r = history.replay(device, settings, options);
    if (!options.empty_caches) options.empty_caches = r.empty_cache_entries;
    const std::vector<uint64_t>& failed = r.counters.out_of_memory;
    OomRemedyOutcome o;
    o.setting = std::move(setting);
    if (!failed.empty()) o.fails_at = failed.front();
    o.peak_reserved = r.counters.peak_reserved;
    bool this_one_failed = !failed.empty() && failed.back() == out.request;
    o.live_bytes = r.counters.allocated + (this_one_failed ? allocator_model::round_size(settings, out.size) : 0);
    out.outcomes.push_back(std::move(o));
  };
  outcome("recorded settings", recorded);
  for (std::string_view remedy : oom_remedies()) {
    allocator_model::Settings settings = apply_scenario(remedy, recorded);
    if (settings == recorded) continue;  // on already
    outcome(std::string(remedy), settings);
  }
  return out;
}

}  // namespace gpumemtrace::report
