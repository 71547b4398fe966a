#include "analyzer/report/growth_model.h"

#include <algorithm>
#include <map>

#include "analyzer/report/growth.h"

namespace gpumemtrace::report {

GrowthModel growth_model(ModelInput& input) {
  const replay::Replay& replay = input.growth_replay();
  SiteFilter filter = input.filter(false);
  GrowthModel model;
  if (const std::optional<replay::PhaseWindowsPlan>& phase = input.growth_windows().phase) {
    model.phase = input.growth_windows().phase_path;
    model.instances = phase->windows;
    model.windows = phase->groups;
  } else if (replay.growth_clock().started()) {
    model.windows = std::min(kGrowthWindows, replay.growth_clock().window() + 1);
  }
  std::map<replay::AccountId, size_t> per_account;
  for (Growth& growth : find_growth(replay)) {
    const replay::Site& site = replay.sites()[growth.site];
    if (!wanted_account(replay.accounts()[site.account], filter) || growth.bytes < filter.min_size) continue;
    if (per_account[site.account]++ >= filter.top) continue;
    model.sites.push_back({memory_of(site.category), device_of(site.device), growth.bytes, growth.rises,
                           std::move(growth.floors), input.stack(site.stack)});
  }
  return model;
}

}  // namespace gpumemtrace::report
