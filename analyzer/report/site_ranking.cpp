#include "analyzer/report/site_ranking.h"

#include <algorithm>
#include <map>

namespace gpumemtrace::report {

bool wanted_account(const replay::Account& account, const SiteFilter& filter) {
  if (account.category != replay::Category::Device) return !filter.device_memory_only && !filter.device;
  return !filter.device || account.device == *filter.device;
}

std::vector<replay::SiteShare> rank_sites(const replay::Replay& replay, const SiteFilter& filter,
                                          const std::function<replay::SiteShare(replay::SiteId)>& value) {
  std::map<replay::AccountId, std::vector<replay::SiteShare>> by_account;
  for (replay::SiteId id = 0; id < replay.sites().size(); ++id) {
    const replay::Site& site = replay.sites()[id];
    if (!wanted_account(replay.accounts()[site.account], filter)) continue;
    replay::SiteShare share = value(id);
    if (share.bytes == 0 || share.bytes < filter.min_size) continue;
    by_account[site.account].push_back(share);
  }
  std::vector<replay::SiteShare> out;
  auto larger = [](const replay::SiteShare& a, const replay::SiteShare& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site;
  };
  for (auto& [account, shares] : by_account) {
    std::sort(shares.begin(), shares.end(), larger);
    if (shares.size() > filter.top) shares.resize(filter.top);
    out.insert(out.end(), shares.begin(), shares.end());
  }
  std::stable_sort(out.begin(), out.end(), larger);
  return out;
}

}  // namespace gpumemtrace::report
