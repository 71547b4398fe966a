#include "analyzer/report/run_profile.h"

#include <algorithm>
#include <map>

#include "analyzer/report/forecast.h"
#include "analyzer/report/growth.h"
#include "analyzer/report/oom_diagnosis.h"
#include "analyzer/report/stack_text.h"
#include "common/utf8.h"

namespace gpumemtrace::report {

namespace {

std::string frame_signature(const symbolize::Frame& frame) {
  if (frame.kind == symbolize::FrameKind::Truncated) return "…";
  std::string_view where = !frame.file.empty() ? basename_of(frame.file) : basename_of(frame.module);
  std::string function = frame.function.empty() ? "?" : frame.function;
  return where.empty() ? function : function + " (" + std::string(where) + ")";
}

}  // namespace

std::string stack_signature(std::span<const symbolize::Frame> frames) {
  std::string out;
  for (const symbolize::Frame& frame : user_frames(frames)) {
    if (!out.empty()) out += " ← ";
    out += frame_signature(frame);
    // The C library's start-up frames beyond main differ from machine to machine (with or without its
    // debug information): a baseline recorded on one must match on another.
    if (frame.kind == symbolize::FrameKind::Native && frame.function == "main") break;
  }
  // As a baseline file stores it (JSON: valid UTF-8), so a name that is not UTF-8 matches itself.
  return out.empty() ? "(no stack)" : valid_utf8(out);
}

RunProfile run_profile(const analysis::Analysis& analysis, const SymbolizeStack& symbolize) {
  const replay::Replay& replay = *analysis.replay;
  RunProfile profile;
  if (analysis.trace.rank >= 0) profile.rank = analysis.trace.rank;
  profile.source = analysis.trace.path;
  profile.pid = analysis.trace.pid;
  profile.start_wall_ns = analysis.trace.start_wall_ns;
  // A window that ends before the trace does (--to) knows what its allocations still held at its end.
  profile.complete = analysis.trace.complete || analysis.options.selection.to_ns != UINT64_MAX;

  std::map<replay::StackId, std::string> signatures;
  auto signature = [&](replay::StackId id) -> const std::string& {
    auto found = signatures.find(id);
    if (found == signatures.end()) found = signatures.emplace(id, stack_signature(symbolize(id))).first;
    return found->second;
  };
  std::vector<Growth> growing = find_growth(replay);
  std::map<replay::AccountId, uint64_t> growth;
  for (const Growth& grown : growing) growth[replay.sites()[grown.site].account] += grown.bytes;

  std::map<int32_t, DeviceProfile> devices;
  std::map<replay::AccountId, std::map<std::string, StackBytes>> stacks;
  for (replay::AccountId id : replay.accounts().devices()) {
    const replay::Account& account = replay.accounts()[id];
    if (account.allocations == 0 && account.failed_allocations == 0) continue;
    DeviceProfile& device = devices[account.device];
    device.device = account.device;
    device.peak_bytes = account.peak_bytes;
    device.peak_time_ns = account.peak_time_ns;
    device.final_bytes = account.live_bytes;
    device.leaked_bytes = profile.complete ? account.live_bytes : 0;
    device.allocations = account.allocations;
    device.frees = account.frees;
    device.failed_allocations = account.failed_allocations;
    device.growth_bytes = growth[id];
    bool by_phase = false;
    DeviceForecast forecast =
        forecast_steps(account.device, device_steps(replay, account.device, most_repeated_phase(replay), &by_phase),
                       usable_memory(replay, account.device));
    if (forecast.verdict == ForecastVerdict::OutOfMemory) device.forecast_oom_step = forecast.oom_step;
    device.forecast_last_step = forecast.last_step;
  }
  for (const replay::Failure& failure : replay.failures()) {
    if (!failure.out_of_memory() || !devices.contains(failure.device)) continue;
    DeviceProfile& device = devices[failure.device];
    if (device.out_of_memory++ > 0) continue;
    OomDiagnosis diagnosis = diagnose(replay, failure, growing);
    OomFigures& first = device.first_out_of_memory.emplace();
    first.device = failure.device;
    first.time_ns = failure.time_ns;
    first.requested_bytes = failure.requested_bytes;
    first.free_bytes = failure.device_free;
    first.total_bytes = failure.device_total;
    first.held_bytes = diagnosis.held_bytes;
    if (diagnosis.device_known) first.others_bytes = diagnosis.others_bytes;
  }
  for (replay::SiteId id = 0; id < replay.sites().size(); ++id) {
    const replay::Site& site = replay.sites()[id];
    if (site.category != replay::Category::Device || !devices.contains(site.device)) continue;
    replay::SiteShare share = replay.at_peak(id);
    if (share.bytes == 0) continue;
    StackBytes& merged = stacks[site.account][signature(site.stack)];
    merged.bytes += share.bytes;
    merged.allocations += share.count;
  }
  for (auto& [id, by_signature] : stacks) {
    DeviceProfile& device = devices[replay.accounts()[id].device];
    for (auto& [key, bytes] : by_signature) {
      bytes.stack = key;
      device.stacks_at_peak.push_back(std::move(bytes));
    }
    std::stable_sort(device.stacks_at_peak.begin(), device.stacks_at_peak.end(),
                     [](const StackBytes& a, const StackBytes& b) { return a.bytes > b.bytes; });
  }
  for (auto& [ordinal, device] : devices) profile.devices.push_back(std::move(device));
  return profile;
}

std::vector<std::string> rank_labels(std::span<const RunProfile> profiles) {
  std::vector<std::string> labels;
  size_t unknown = 0;
  for (const RunProfile& profile : profiles)
    labels.push_back(profile.rank ? "rank " + std::to_string(*profile.rank) : "trace " + std::to_string(unknown++));
  if (profiles.size() == 1 && !profiles[0].rank) labels[0].clear();
  return labels;
}

bool left_out_of_set(const RunProfile& profile, size_t traces_in_set) {
  return traces_in_set > 1 && profile.devices.empty();
}

const DeviceProfile* find_device(const RunProfile& profile, int32_t device) {
  for (const DeviceProfile& candidate : profile.devices)
    if (candidate.device == device) return &candidate;
  return nullptr;
}

bool rank_order(const RunProfile& a, const RunProfile& b) {
  if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();
  return a.rank && *a.rank < *b.rank;
}

void sort_by_rank(std::vector<RunProfile>& profiles) { std::stable_sort(profiles.begin(), profiles.end(), rank_order); }

}  // namespace gpumemtrace::report
