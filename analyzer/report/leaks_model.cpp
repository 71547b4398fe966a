#include "analyzer/report/leaks_model.h"

namespace gpumemtrace::report {

LeaksModel leaks_model(ModelInput& input) {
  const replay::Replay& replay = input.replay();
  SiteFilter filter = input.filter(false);
  LeaksModel model;
  model.complete = input.trace().complete;
  model.device = input.selection().device;
  const replay::Accounts& accounts = replay.accounts();
  for (replay::AccountId id = 0; id < accounts.size(); ++id) {
    if (!wanted_account(accounts[id], filter)) continue;
    model.bytes += accounts[id].live_bytes;
    model.count += accounts[id].live_count;
  }
  for (const replay::SiteShare& share : rank_sites(replay, filter, [&](replay::SiteId id) {
         const replay::Site& site = replay.sites()[id];
         return replay::SiteShare{id, site.bytes, site.count};
       }))
    model.sites.push_back(input.site(replay, share));
  return model;
}

}  // namespace gpumemtrace::report
