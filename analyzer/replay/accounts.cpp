#include "analyzer/replay/accounts.h"

#include <algorithm>

namespace gpumemtrace::replay {

namespace {

std::unique_ptr<Account> new_account(Category category, int32_t device) {
  auto account = std::make_unique<Account>();
  account->category = category;
  account->device = device;
  return account;
}

}  // namespace

Accounts::Accounts() {
  accounts_.push_back(new_account(Category::Managed, trace::kNoDevice));
  accounts_.push_back(new_account(Category::HostPinned, trace::kNoDevice));
}

AccountId Accounts::for_kind(trace::MemoryKind kind, int32_t device) {
  switch (format::memory_category(kind)) {
    case Category::Managed:
      return kManaged;
    case Category::HostPinned:
      return kHostPinned;
    default:
      return for_device(device);
  }
}

AccountId Accounts::for_device(int32_t device) {
  if (device == last_device_ && last_device_account_ != 0) return last_device_account_;
  AccountId id = 2;
  while (id < accounts_.size() && accounts_[id]->device != device) ++id;
  if (id == accounts_.size()) accounts_.push_back(new_account(Category::Device, device));
  last_device_ = device;
  last_device_account_ = id;
  return id;
}

const Account* Accounts::find_device(int32_t device) const {
  for (AccountId id = 2; id < accounts_.size(); ++id)
    if (accounts_[id]->device == device) return accounts_[id].get();
  return nullptr;
}

std::vector<AccountId> Accounts::devices() const {
  std::vector<AccountId> out;
  for (AccountId id = 2; id < accounts_.size(); ++id) out.push_back(id);
  std::sort(out.begin(), out.end(), [&](AccountId a, AccountId b) { return accounts_[a]->device < accounts_[b]->device; });
  return out;
}

}  // namespace gpumemtrace::replay
