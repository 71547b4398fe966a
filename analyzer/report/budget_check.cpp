#include "analyzer/report/budget_check.h"

#include <cmath>
#include <cstdio>
#include <limits>


namespace gpumemtrace::report {

namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
}

// The checks of one device against the limits.
void check_limits(const DeviceProfile& device, const Limits& limits, CheckResult base, std::vector<CheckResult>& out) {
  auto add = [&](CheckKind kind, std::optional<uint64_t> limit, uint64_t measured) {
    if (!limit) return;
    CheckResult result = base;
    result.kind = kind;
    result.limit = *limit;
    result.measured = measured;
    result.passed = measured <= *limit;
    out.push_back(std::move(result));
  };
  add(CheckKind::MaxPeak, limits.max_peak, device.peak_bytes);
  add(CheckKind::MaxLeak, limits.max_leak, device.leaked_bytes);
  add(CheckKind::MaxGrowth, limits.max_growth, device.growth_bytes.value_or(0));
  add(CheckKind::MaxOoms, limits.max_ooms, device.out_of_memory);
  if (limits.max_forecast_steps) {
    CheckResult result = base;
    result.kind = CheckKind::MaxForecastSteps;
    result.limit = *limits.max_forecast_steps;
    result.forecast_oom_step = device.forecast_oom_step;
    if (device.forecast_oom_step) result.measured = *device.forecast_oom_step - device.forecast_last_step;
    result.passed = !device.forecast_oom_step || result.measured > result.limit;
    out.push_back(std::move(result));
  }
}

// The checks of one device against its baseline (nullptr: the baseline run did not use the device).
void check_baseline(const DeviceProfile& device, const DeviceProfile* baseline, const CheckOptions& options,
                    CheckResult base, std::vector<CheckResult>& out) {
  auto add = [&](CheckKind kind, uint64_t baseline_bytes, uint64_t measured) {
    CheckResult result = base;
    result.kind = kind;
    result.baseline = baseline_bytes;
    result.limit = saturating_add(baseline_bytes, options.tolerance.allowance(baseline_bytes));
    result.measured = measured;
    result.passed = measured <= result.limit;
    if (!result.passed)
      for (const StackChange& change : stack_changes(baseline, &device))
        if (change.delta() > 0 && result.stacks.size() < options.top_stacks) result.stacks.push_back(change);
    out.push_back(std::move(result));
  };
  add(CheckKind::BaselinePeak, baseline ? baseline->peak_bytes : 0, device.peak_bytes);
  add(CheckKind::BaselineLeak, baseline ? baseline->leaked_bytes : 0, device.leaked_bytes);
}

}  // namespace

uint64_t Tolerance::allowance(uint64_t baseline) const {
  if (!percent) return bytes;
  long double allowed = static_cast<long double>(baseline) * *percent / 100.0L;
  if (allowed >= 18446744073709551615.0L) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(std::floor(allowed));
}

std::string_view check_name(CheckKind kind) {
  switch (kind) {
    case CheckKind::MaxPeak: return "max-peak";
    case CheckKind::MaxLeak: return "max-leak";
    case CheckKind::MaxGrowth: return "max-growth";
    case CheckKind::MaxOoms: return "max-ooms";
    case CheckKind::MaxForecastSteps: return "max-forecast-steps";
    case CheckKind::BaselinePeak: return "baseline-peak";
    case CheckKind::BaselineLeak: return "baseline-leak";
    case CheckKind::BaselineRank: return "baseline-rank";
  }
  return "?";
}

bool CheckModel::passed() const { return failures() == 0; }

size_t CheckModel::failures() const {
  size_t count = 0;
  for (const CheckResult& result : results) count += !result.passed;
  return count;
}

CheckModel check_budgets(std::span<const RunProfile> runs, const CheckOptions& options) {
  CheckModel model;
  model.traces = runs.size();
  if (runs.size() > 1) model.balance = rank_balance(runs, options.device);
  std::vector<std::string> labels = rank_labels(runs);
  std::vector<RankPair> pairs;
  if (options.baseline) pairs = match_ranks(*options.baseline, runs);

  for (size_t i = 0; i < runs.size(); ++i) {
    const RunProfile& run = runs[i];
    if (!run.complete && options.limits.max_leak) model.incomplete.push_back(run.source);
    const RunProfile* baseline = nullptr;
    for (const RankPair& pair : pairs)
      if (pair.after == i && pair.before != SIZE_MAX) baseline = &(*options.baseline)[pair.before];
    for (const DeviceProfile& device : run.devices) {
      if (options.device && device.device != *options.device) continue;
      CheckResult base;
      base.rank = labels[i];
      base.device = device.device;
      base.source = run.source;
      check_limits(device, options.limits, base, model.results);
      if (options.baseline) {
        const DeviceProfile* baseline_device = baseline ? find_device(*baseline, device.device) : nullptr;
        check_baseline(device, baseline_device, options, base, model.results);
      }
    }
  }
  for (const RankPair& pair : pairs) {
    if (pair.after != SIZE_MAX) continue;
    CheckResult missing;
    missing.kind = CheckKind::BaselineRank;
    missing.rank = pair.rank;
    missing.limit = 1;  // traces expected
    missing.passed = false;
    model.results.push_back(std::move(missing));
  }
  return model;
}

}  // namespace gpumemtrace::report
