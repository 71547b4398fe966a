#include "analyzer/report/timeline_model.h"

namespace gpumemtrace::report {

std::vector<replay::AccountId> timeline_accounts(ModelInput& input) {
  const replay::Accounts& accounts = input.replay().accounts();
  SiteFilter filter = input.filter(false);
  std::vector<replay::AccountId> shown;
  for (replay::AccountId id : accounts.devices())
    if (wanted_account(accounts[id], filter)) shown.push_back(id);
  for (replay::AccountId id : {replay::Accounts::kManaged, replay::Accounts::kHostPinned})
    if (accounts[id].allocations > 0 && wanted_account(accounts[id], filter)) shown.push_back(id);
  return shown;
}

TimelineModel timeline_model(ModelInput& input) {
  const replay::Replay& replay = input.replay();
  const replay::Accounts& accounts = replay.accounts();
  std::vector<replay::AccountId> shown = timeline_accounts(input);

  TimelineModel model;
  model.started = replay.timeline_clock().started();
  model.start_ns = replay.timeline_clock().origin_ns();
  model.window_ns = replay.timeline_clock().width_ns();
  model.end_ns = replay.end_time_ns();
  model.device = input.selection().device;
  for (replay::AccountId id : shown)
    model.series.push_back({input.account(accounts[id]), model.started ? replay.timeline(id) : std::vector<uint64_t>{}});
  return model;
}

}  // namespace gpumemtrace::report
