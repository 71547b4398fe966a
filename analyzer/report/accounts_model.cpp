#include "analyzer/report/accounts_model.h"

namespace gpumemtrace::report {

AccountsModel accounts_model(ModelInput& input, bool both_views) {
  const replay::Accounts& accounts = input.replay().accounts();
  SiteFilter filter = input.filter(false);
  AccountsModel model;
  model.complete = input.trace().complete;
  for (replay::AccountId id : accounts.devices())
    if (wanted_account(accounts[id], filter)) model.devices.push_back(input.account(accounts[id]));
  for (replay::AccountId id : {replay::Accounts::kManaged, replay::Accounts::kHostPinned}) {
    const replay::Account& account = accounts[id];
    if ((account.allocations > 0 || account.failed_allocations > 0) && wanted_account(account, filter))
      model.other_memory.push_back(input.account(account));
  }
  model.managed = input.account(accounts[replay::Accounts::kManaged]);
  model.host_pinned = input.account(accounts[replay::Accounts::kHostPinned]);
  if (!both_views || input.heaps() == 0) return model;
  model.other_view = input.view() == View::Used ? View::Reserved : View::Used;
  const replay::Accounts& other = input.replay_of(*model.other_view).accounts();
  for (const AccountFigures& device : model.devices) {
    const replay::Account* account = device.device ? other.find_device(*device.device) : nullptr;
    AccountFigures figures = account ? input.account(*account) : AccountFigures{};
    figures.device = device.device;
    model.other_devices.push_back(figures);
  }
  return model;
}

}  // namespace gpumemtrace::report
