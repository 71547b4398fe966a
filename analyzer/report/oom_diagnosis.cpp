#include "analyzer/report/oom_diagnosis.h"

namespace gpumemtrace::report {

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::TooLarge:
      return "too-large";
    case Verdict::PytorchCache:
      return "pytorch-cache";
    case Verdict::Fragmentation:
      return "fragmentation";
    case Verdict::PoolCache:
      return "pool-cache";
    case Verdict::OtherProcesses:
      return "other-processes";
    case Verdict::Growth:
      return "growth";
    default:
      return "live-set";
  }
}

std::string_view cache_remedy_name(CacheRemedy remedy) {
  switch (remedy) {
    case CacheRemedy::EmptyCache:
      return "empty-cache";
    case CacheRemedy::ExpandableSegments:
      return "expandable-segments";
    default:
      return "max-split-size";
  }
}

namespace {

uint64_t live_at_failure(const replay::Failure& failure, replay::SiteId site) {
  for (const replay::SiteShare& share : failure.live_set)
    if (share.site == site) return share.bytes;
  return 0;
}

}  // namespace

OomDiagnosis diagnose(const replay::Replay& replay, const replay::Failure& failure, const std::vector<Growth>& growth,
                      const std::optional<PytorchAllocator>& pytorch, std::optional<uint64_t> others_listed) {
  OomDiagnosis d;
  const uint64_t requested = failure.requested_bytes;
  const uint64_t free = failure.device_free;
  const uint64_t total = failure.device_total;
  d.device_known = total != 0;
  d.shortfall_bytes = requested > free ? requested - free : 0;
  for (const replay::PoolState& pool : failure.pools) {
    d.pool_reserved_bytes += pool.reserved_bytes;
    d.pool_used_bytes += pool.used_bytes;
    if (pool.reserved_bytes > pool.used_bytes) d.pool_unused_bytes += pool.reserved_bytes - pool.used_bytes;
  }
  d.heap_free_bytes = failure.heaps.free_bytes;
  d.heap_largest_free_bytes = failure.heaps.largest_free_bytes;
  d.held_bytes = failure.live_bytes + d.pool_unused_bytes;
  if (d.device_known && total > free + d.held_bytes) d.others_bytes = total - free - d.held_bytes;
  if (d.device_known && others_listed) d.others_bytes = *others_listed;

  for (const Growth& g : growth) {
    if (replay.sites()[g.site].account != failure.account) continue;
    uint64_t held = live_at_failure(failure, g.site);
    if (held > 0 && held >= d.shortfall_bytes) {
      d.growth = g;
      d.growth_live_bytes = held;
      break;
    }
  }

  const replay::HeapsAtFailure& heaps = failure.heaps;
  if (pytorch) d.expandable_segments = pytorch->expandable_segments;
  if (d.device_known && requested > total) {
    d.verdict = Verdict::TooLarge;
  } else if (pytorch && d.heap_free_bytes > 0 && requested <= free + d.heap_free_bytes) {
    d.verdict = Verdict::PytorchCache;
    if (heaps.idle_bytes > 0 && requested <= free + heaps.idle_bytes)
      d.cache_remedy = CacheRemedy::EmptyCache;
    else
      d.cache_remedy =
          pytorch->expandable_segments == true ? CacheRemedy::MaxSplitSize : CacheRemedy::ExpandableSegments;
  } else if (d.heap_free_bytes > 0 && requested <= free + d.heap_free_bytes &&
             requested > d.heap_largest_free_bytes) {
    d.verdict = Verdict::Fragmentation;
  } else if (d.pool_unused_bytes > 0 && requested <= free + d.pool_unused_bytes) {
    d.verdict = Verdict::PoolCache;
  } else if (d.device_known && d.others_bytes >= d.held_bytes && d.others_bytes * 20 >= total &&
             requested <= free + d.others_bytes) {
    d.verdict = Verdict::OtherProcesses;
  } else if (d.growth) {
    d.verdict = Verdict::Growth;
  } else {
    d.verdict = Verdict::LiveSet;
  }
  return d;
}

}  // namespace gpumemtrace::report
