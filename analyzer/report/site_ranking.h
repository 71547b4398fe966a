// Picks the sites a report shows: those of the wanted accounts, at least min_size bytes, largest first,
// the first `top` of each account.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "analyzer/replay/replay.h"

namespace gpumemtrace::report {

struct SiteFilter {
  std::optional<int32_t> device;  // only this device's memory (device categories only)
  bool device_memory_only = true;  // leave out managed and pinned host memory
  uint64_t min_size = 0;
  size_t top = 10;  // per account
};

bool wanted_account(const replay::Account& account, const SiteFilter& filter);

// `value` gives each site's figure (bytes and count) for this report: live now, at the peak, ...
std::vector<replay::SiteShare> rank_sites(const replay::Replay& replay, const SiteFilter& filter,
                                          const std::function<replay::SiteShare(replay::SiteId)>& value);

}  // namespace gpumemtrace::report
