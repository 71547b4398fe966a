#include "analyzer/report/rank_balance.h"

#include <algorithm>

namespace gpumemtrace::report {

namespace {

RankRow rank_row(const RunProfile& run, std::string label, std::optional<int32_t> device) {
  RankRow row;
  row.rank = std::move(label);
  row.source = run.source;
  row.pid = run.pid;
  row.complete = run.complete;
  row.start_wall_ns = run.start_wall_ns;
  for (const DeviceProfile& profile : run.devices) {
    if (device && profile.device != *device) continue;
    if (profile.peak_bytes > row.peak_bytes)
      row.peak_bytes = profile.peak_bytes, row.device = profile.device, row.peak_time_ns = profile.peak_time_ns;
    row.leaked_bytes += profile.leaked_bytes;
    row.out_of_memory += profile.out_of_memory;
    const std::optional<OomFigures>& failure = profile.first_out_of_memory;
    if (failure && (!row.first_out_of_memory || failure->time_ns < row.first_out_of_memory->time_ns))
      row.first_out_of_memory = failure;
  }
  return row;
}

}  // namespace

uint64_t RankBalance::common_time(const RankRow& row, uint64_t time_ns) const {
  return row.start_wall_ns ? row.start_wall_ns - start_wall_ns + time_ns : time_ns;
}

RankBalance rank_balance(std::span<const RunProfile> runs, std::optional<int32_t> device) {
  RankBalance balance;
  if (runs.empty()) return balance;
  std::vector<std::string> labels = rank_labels(runs);
  for (size_t i = 0; i < runs.size(); ++i) balance.ranks.push_back(rank_row(runs[i], labels[i], device));

  std::vector<uint64_t> peaks;
  for (const RankRow& row : balance.ranks) peaks.push_back(row.peak_bytes);
  std::sort(peaks.begin(), peaks.end());
  balance.median_peak_bytes = peaks[(peaks.size() - 1) / 2];
  for (size_t i = 0; i < balance.ranks.size(); ++i)
    if (!balance.largest || balance.ranks[i].peak_bytes > balance.ranks[*balance.largest].peak_bytes) balance.largest = i;
  uint64_t largest = balance.ranks[*balance.largest].peak_bytes;
  if (balance.median_peak_bytes)
    balance.imbalance = static_cast<double>(largest) / static_cast<double>(balance.median_peak_bytes);

  for (const RankRow& row : balance.ranks)
    if (row.start_wall_ns && (!balance.start_wall_ns || row.start_wall_ns < balance.start_wall_ns))
      balance.start_wall_ns = row.start_wall_ns;
  for (size_t i = 0; i < balance.ranks.size(); ++i) {
    const RankRow& row = balance.ranks[i];
    if (!row.first_out_of_memory) continue;
    uint64_t at = balance.common_time(row, row.first_out_of_memory->time_ns);
    if (!balance.first_failed ||
        at < balance.common_time(balance.ranks[*balance.first_failed],
                                 balance.ranks[*balance.first_failed].first_out_of_memory->time_ns))
      balance.first_failed = i;
  }
  return balance;
}

}  // namespace gpumemtrace::report
