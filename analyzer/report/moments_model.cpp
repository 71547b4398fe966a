#include "analyzer/report/moments_model.h"

#include <algorithm>

#include "analyzer/report/timeline_model.h"

namespace gpumemtrace::report {

MomentsModel moments_model(ModelInput& input) {
  const replay::Replay& replay = input.replay();
  MomentsModel model;
  if (!replay.timeline_clock().started()) return model;
  std::vector<replay::AccountId> accounts = timeline_accounts(input);

  replay::MomentsPlan plan;
  plan.sites_per_moment = MomentsModel::kSitesPerMoment;
  plan.origin_ns = replay.timeline_clock().origin_ns();
  size_t slices = replay.timeline_clock().window() + size_t{1};
  size_t group = (slices + MomentsModel::kMaxMoments - 1) / MomentsModel::kMaxMoments;
  plan.width_ns = replay.timeline_clock().width_ns() * group;
  for (replay::AccountId id : accounts) {
    std::vector<uint64_t> timeline = replay.timeline(id);
    replay::MomentsPlan::Wanted& wanted = plan.accounts.emplace_back();
    wanted.account = id;
    for (size_t i = 0; i < timeline.size(); i += group)
      wanted.slice_max.push_back(*std::max_element(timeline.begin() + static_cast<std::ptrdiff_t>(i),
                                                   timeline.begin() + static_cast<std::ptrdiff_t>(std::min(i + group, timeline.size()))));
  }
  uint64_t width = plan.width_ns, origin = plan.origin_ns;
  std::vector<std::vector<replay::LiveMoment>> found = analysis::live_moments(input.analysis(), replay.options(), std::move(plan));

  for (size_t i = 0; i < accounts.size(); ++i) {
    AccountMoments& out = model.accounts.emplace_back();
    out.account = input.account(replay.accounts()[accounts[i]]);
    for (const replay::LiveMoment& live : found[i]) {
      Moment& moment = out.moments.emplace_back();
      moment.time_ns = live.time_ns;
      moment.start_ns = origin + live.slice * width;
      moment.end_ns = moment.start_ns + width;
      moment.live_bytes = live.live_bytes;
      moment.live_count = live.live_count;
      for (const replay::SiteShare& share : live.sites) moment.sites.push_back(input.site(replay, share));
      moment.other_bytes = live.other_bytes;
      moment.other_count = live.other_count;
      moment.other_sites = live.other_sites;
    }
  }
  return model;
}

}  // namespace gpumemtrace::report
