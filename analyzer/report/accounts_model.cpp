#include "analyzer/report/accounts_model.h"

namespace gpumemtrace::report {

AccountsModel accounts_model(ModelInput& input) {
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
  return model;
}

}  // namespace gpumemtrace::report
