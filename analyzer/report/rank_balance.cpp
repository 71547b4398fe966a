#include "analyzer/report/rank_balance.h"

#include <algorithm>

namespace gpumemtrace::report {

RankBalance rank_balance(std::span<const RunProfile> runs, std::optional<int32_t> device) {
  RankBalance balance;
  if (runs.size() < 2) return balance;
  std::vector<std::string> labels = rank_labels(runs);
  for (size_t i = 0; i < runs.size(); ++i) {
    RankRow& row = balance.ranks.emplace_back();
    row.rank = labels[i];
    for (const DeviceProfile& profile : runs[i].devices) {
      if (device && profile.device != *device) continue;
      if (profile.peak_bytes > row.peak_bytes) row.peak_bytes = profile.peak_bytes, row.device = profile.device;
      row.leaked_bytes += profile.leaked_bytes;
      row.out_of_memory += profile.out_of_memory;
    }
  }
  std::vector<uint64_t> peaks;
  for (const RankRow& row : balance.ranks) peaks.push_back(row.peak_bytes);
  std::sort(peaks.begin(), peaks.end());
  balance.median_peak_bytes = peaks[(peaks.size() - 1) / 2];
  for (size_t i = 0; i < balance.ranks.size(); ++i)
    if (!balance.largest || balance.ranks[i].peak_bytes > balance.ranks[*balance.largest].peak_bytes) balance.largest = i;
  uint64_t largest = balance.ranks[*balance.largest].peak_bytes;
  if (balance.median_peak_bytes)
    balance.imbalance = static_cast<double>(largest) / static_cast<double>(balance.median_peak_bytes);
  return balance;
}

}  // namespace gpumemtrace::report
