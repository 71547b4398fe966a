// A directory of traces read at once (`summary`, `peak`, `leaks` and `oom` of a directory, one trace per
// rank or process): the per-rank table (rank_balance.h), the traces left out and why, then the command's
// report of the rank a reader wants next: the one that stands out for that command (the largest peak,
// the most leaked, the first to run out of memory), the rank chosen with --rank, or every rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/report/device_placement.h"
#include "analyzer/report/rank_balance.h"
#include "analyzer/report/report.h"
#include "analyzer/report/run_profile.h"

namespace gpumemtrace::report {

// Whose report follows the table when no --rank was given: the command's own question.
enum class RankFocus : uint8_t {
  LargestPeak,      // peak
  MostLeaked,       // leaks; none when no rank leaked
  FirstFailed,      // oom; none when no rank ran out of memory
  FailedOrLargest,  // summary: the first to run out of memory, else the largest peak
};

// --rank N, --rank all.
struct RankChoice {
  bool all = false;
  std::optional<int64_t> rank;
};

// Why a rank's report is shown.
enum class RankPick : uint8_t { LargestPeak, MostLeaked, FirstFailed, Chosen, All };
std::string_view rank_pick_name(RankPick pick);  // "largest-peak", "most-leaked", "first-failed", "chosen", "all"

// One readable trace of the directory: its profile and the command's report of it.
struct RankTrace {
  RunProfile profile;
  Report report;
  DevicePlacement placement;
};

struct UnreadableTrace {
  std::string path;
  std::string error;  // what the reader said
};

struct RankDetail {
  std::string rank;  // its label in the table
  RankPick pick = RankPick::Chosen;
  Report report;
};

struct RankReport {
  std::string path;                         // the directory
  RankBalance balance;                      // a row per trace that allocated device memory, by rank
  std::vector<std::string> left_out;        // traces that allocated no device memory (a launcher, a loader)
  std::vector<UnreadableTrace> unreadable;  // traces that could not be read: not in the table
  RankFocus focus = RankFocus::LargestPeak;
  std::vector<RankDetail> details;          // in rank order; empty when nothing stands out for the focus
  // The verdict wrong-gpu of the directory: ranks that allocate on one physical GPU (the same UUID), and each
  // rank's own (device_placement.h), its label first; the remedy when there are any.
  std::vector<std::string> placement_findings;
  std::string placement_remedy;
};

// `traces` in any order; a --rank N that no trace has gives no detail (the command says so first).
RankReport rank_report(std::string path, std::vector<RankTrace> traces, std::vector<UnreadableTrace> unreadable,
                       RankFocus focus, const RankChoice& choice, std::optional<int32_t> device);

}  // namespace gpumemtrace::report
