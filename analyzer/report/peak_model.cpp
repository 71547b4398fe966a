#include "analyzer/report/peak_model.h"

namespace gpumemtrace::report {

PeakModel peak_model(ModelInput& input) {
  const replay::Replay& replay = input.replay();
  SiteFilter filter = input.filter(true);
  std::vector<replay::SiteShare> shares =
      rank_sites(replay, filter, [&](replay::SiteId id) { return replay.at_peak(id); });
  PeakModel model;
  model.device = input.selection().device;
  for (const replay::SiteShare& share : shares) model.sites.push_back(input.site(replay, share));
  for (replay::AccountId id : replay.accounts().devices()) {
    const replay::Account& account = replay.accounts()[id];
    if (!wanted_account(account, filter) || account.peak_bytes == 0) continue;
    DevicePeak& device = model.devices.emplace_back();
    device.account = input.account(account);
    for (auto kind : {trace::MemoryKind::Device, trace::MemoryKind::AsyncPool, trace::MemoryKind::VmmPhysical,
                      trace::MemoryKind::Array}) {
      uint64_t bytes = account.kind_bytes_at_peak[static_cast<size_t>(kind)];
      if (bytes) device.kinds.push_back({std::string(format::memory_kind_name(kind)), bytes});
    }
    for (size_t i = 0; i < shares.size(); ++i)
      if (replay.sites()[shares[i].site].account == id) device.sites.push_back(model.sites[i]);
  }
  return model;
}

}  // namespace gpumemtrace::report
