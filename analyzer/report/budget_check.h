// `gpumemtrace check`: the figures of one or more runs (one profile per trace) held against limits and,
// optionally, a baseline with a tolerance. Each check of each rank and device is one result, passed or
// failed; a failed check against the baseline carries the stacks that grew most.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analyzer/report/profile_diff.h"
#include "analyzer/report/rank_balance.h"
#include "analyzer/report/run_profile.h"

namespace gpumemtrace::report {

struct Limits {
  std::optional<uint64_t> max_peak;    // bytes
  std::optional<uint64_t> max_leak;    // bytes
  std::optional<uint64_t> max_growth;  // bytes
  std::optional<uint64_t> max_ooms;    // out-of-memory failures
  std::optional<uint64_t> max_forecast_steps;  // fails when an out-of-memory failure is forecast within so many steps
};

// How much a figure may exceed its baseline: a share of the baseline figure ("5%") or bytes ("64MiB").
struct Tolerance {
  std::optional<double> percent;
  uint64_t bytes = 0;

  uint64_t allowance(uint64_t baseline) const;  // bytes above the baseline that still pass
};

struct CheckOptions {
  Limits limits;
  std::optional<int32_t> device;                 // --device: only this device
  const std::vector<RunProfile>* baseline = nullptr;
  Tolerance tolerance;
  size_t top_stacks = 5;                         // stacks listed with a failed baseline check
};

enum class CheckKind : uint8_t {
  MaxPeak, MaxLeak, MaxGrowth, MaxOoms,
  MaxForecastSteps,            // measured: the steps from the last one seen to the forecast failure
  BaselinePeak, BaselineLeak,  // the figure may exceed the baseline's by the tolerance
  BaselineRank,                // a rank (trace) of the baseline that the run does not have
};

// "max-peak", "max-leak", "max-growth", "max-ooms", "max-forecast-steps", "baseline-peak", "baseline-leak",
// "baseline-rank".
std::string_view check_name(CheckKind kind);

struct CheckResult {
  CheckKind kind = CheckKind::MaxPeak;
  std::string rank;               // rank_labels(); "" for a lone process
  std::optional<int32_t> device;  // none for baseline-rank
  uint64_t limit = 0;             // bytes (a count for max-ooms); baseline + allowance for baseline checks
  uint64_t measured = 0;
  std::optional<uint64_t> baseline;  // the baseline's figure, for the baseline checks
  std::optional<uint64_t> forecast_oom_step;  // max-forecast-steps: the step of the forecast failure; none: none
  bool passed = true;
  std::string source;                // the trace (or nothing for baseline-rank)
  std::vector<StackChange> stacks;   // a failed baseline check: the stacks that grew most, at most top_stacks
};

struct CheckModel {
  std::vector<CheckResult> results;  // by rank, then device, then check kind
  size_t traces = 0;
  std::vector<std::string> incomplete;  // traces that did not end normally: their leaks are not known
  RankBalance balance;                  // when there are several ranks (empty for one)

  bool passed() const;
  size_t failures() const;
};

CheckModel check_budgets(std::span<const RunProfile> runs, const CheckOptions& options);

}  // namespace gpumemtrace::report
