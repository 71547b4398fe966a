#include "analyzer/replay/live_moments.h"

#include <algorithm>
#include <utility>

namespace gpumemtrace::replay {

namespace {

// What the account holds now: nothing before the replay has seen its first record.
uint64_t live_bytes(const Replay& replay, AccountId account) {
  return account < replay.accounts().size() ? replay.accounts()[account].live_bytes : 0;
}

}  // namespace

LiveMoments::LiveMoments(MomentsPlan plan)
    : plan_(std::move(plan)), moments_(plan_.accounts.size()), next_slice_(plan_.accounts.size(), 0) {
  if (plan_.width_ns == 0) plan_.width_ns = 1;
}

void LiveMoments::before(const Replay& replay, uint64_t time_ns) {
  if (time_ns < plan_.origin_ns) return;
  uint64_t slice = (time_ns - plan_.origin_ns) / plan_.width_ns;
  if (seen_ && slice <= slice_) return;
  // The record opens a later slice: what was live before it is what each slice from the last one seen up
  // to this one started with (and all it held in the slices without records).
  for (uint64_t s = seen_ ? uint64_t{slice_} + 1 : 0; s <= slice; ++s) {
    bool wanted_later = false;
    for (size_t i = 0; i < plan_.accounts.size(); ++i) {
      const MomentsPlan::Wanted& wanted = plan_.accounts[i];
      if (s >= wanted.slice_max.size()) continue;
      wanted_later = true;
      if (next_slice_[i] > s || live_bytes(replay, wanted.account) != wanted.slice_max[s]) continue;
      moments_[i].push_back(capture(replay, wanted.account, static_cast<uint32_t>(s), plan_.origin_ns + s * plan_.width_ns));
      next_slice_[i] = static_cast<uint32_t>(s + 1);
    }
    if (!wanted_later) break;
  }
}

void LiveMoments::after(const Replay& replay, uint64_t time_ns) {
  if (time_ns < plan_.origin_ns) return;
  uint64_t slice = std::min<uint64_t>((time_ns - plan_.origin_ns) / plan_.width_ns, UINT32_MAX);
  if (!seen_ || slice > slice_) slice_ = static_cast<uint32_t>(slice);
  seen_ = true;
  look(replay, slice_, time_ns);
}

void LiveMoments::look(const Replay& replay, uint32_t slice, uint64_t time_ns) {
  for (size_t i = 0; i < plan_.accounts.size(); ++i) {
    const MomentsPlan::Wanted& wanted = plan_.accounts[i];
    if (slice >= wanted.slice_max.size() || next_slice_[i] > slice) continue;
    if (live_bytes(replay, wanted.account) != wanted.slice_max[slice]) continue;
    moments_[i].push_back(capture(replay, wanted.account, slice, time_ns));
    next_slice_[i] = slice + 1;
  }
}

LiveMoment LiveMoments::capture(const Replay& replay, AccountId account, uint32_t slice, uint64_t time_ns) const {
  LiveMoment moment;
  moment.slice = slice;
  moment.time_ns = time_ns;
  if (account >= replay.accounts().size()) return moment;  // not seen yet: nothing live
  moment.live_bytes = replay.accounts()[account].live_bytes;
  moment.live_count = replay.accounts()[account].live_count;
  const std::vector<Site>& sites = replay.sites();
  for (SiteId id = 0; id < sites.size(); ++id)
    if (sites[id].account == account && sites[id].count > 0)
      moment.sites.push_back({id, sites[id].bytes, sites[id].count});
  auto larger = [](const SiteShare& a, const SiteShare& b) { return a.bytes > b.bytes || (a.bytes == b.bytes && a.site < b.site); };
  size_t keep = std::min(moment.sites.size(), plan_.sites_per_moment);
  std::partial_sort(moment.sites.begin(), moment.sites.begin() + static_cast<std::ptrdiff_t>(keep), moment.sites.end(),
                    larger);
  for (size_t i = keep; i < moment.sites.size(); ++i) {
    moment.other_bytes += moment.sites[i].bytes;
    moment.other_count += moment.sites[i].count;
    ++moment.other_sites;
  }
  moment.sites.resize(keep);
  return moment;
}

}  // namespace gpumemtrace::replay
