#include "analyzer/report/weights_model.h"

#include <cstdint>

namespace gpumemtrace::report {

namespace {
constexpr std::string_view kNames[] = {"peak", "leaked", "allocated"};
}  // namespace

std::string_view weighing_name(Weighing weighing) { return kNames[static_cast<size_t>(weighing)]; }

std::optional<Weighing> weighing_named(std::string_view name) {
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (kNames[i] == name) return static_cast<Weighing>(i);
  return std::nullopt;
}

StackWeightsModel stack_weights_model(ModelInput& input, Weighing what) {
  const replay::Replay& replay = input.reserved_replay();  // exports show the driver's view
  SiteFilter everything{.device = std::nullopt, .device_memory_only = false, .min_size = 0, .top = SIZE_MAX};
  std::vector<replay::SiteShare> shares = rank_sites(replay, everything, [&](replay::SiteId id) -> replay::SiteShare {
    const replay::Site& site = replay.sites()[id];
    switch (what) {
      case Weighing::Peak: return replay.at_peak(id);
      case Weighing::Leaked: return {id, site.bytes, site.count};
      case Weighing::Allocated: return {id, site.allocated_bytes, site.allocations};
    }
    return {id, 0, 0};
  });
  StackWeightsModel model{what, {}};
  for (const replay::SiteShare& share : shares)
    if (share.bytes > 0 || share.count > 0) model.sites.push_back(input.site(replay, share));
  return model;
}

}  // namespace gpumemtrace::report
