#include "analyzer/report/fragmentation.h"

namespace gpumemtrace::report {

namespace {

constexpr size_t kind_index(trace::MemoryKind kind) { return static_cast<size_t>(kind); }

FailureFit fit_of(const replay::Failure& failure) {
  FailureFit fit;
  fit.failure = &failure;
  for (const replay::PoolState& pool : failure.pools) {
    fit.pool_reserved_bytes += pool.reserved_bytes;
    fit.pool_used_bytes += pool.used_bytes;
  }
  if (fit.pool_reserved_bytes > fit.pool_used_bytes) fit.external_bytes = fit.pool_reserved_bytes - fit.pool_used_bytes;
  uint64_t async_live = failure.kind_bytes[kind_index(trace::MemoryKind::AsyncPool)];
  if (!failure.pools.empty())
    fit.internal_bytes = fit.pool_used_bytes > async_live ? fit.pool_used_bytes - async_live : 0;
  fit.fits_free_plus_unused = failure.requested_bytes <= failure.device_free + fit.external_bytes;
  return fit;
}

}  // namespace

std::vector<DeviceFragmentation> fragmentation(const replay::Replay& replay, const SiteFilter& filter) {
  std::vector<DeviceFragmentation> out;
  for (replay::AccountId id : replay.accounts().devices()) {
    const replay::Account& account = replay.accounts()[id];
    if (!wanted_account(account, filter)) continue;
    DeviceFragmentation device;
    device.device = account.device;
    for (const replay::PoolState& pool : replay.pools())
      if (pool.device == account.device) device.pools.push_back(pool);
    device.vmm_physical_bytes = account.kind_bytes[kind_index(trace::MemoryKind::VmmPhysical)];
    device.vmm_mapped_bytes = account.vmm_mapped_bytes;
    device.vmm_physical_at_peak = account.kind_bytes_at_peak[kind_index(trace::MemoryKind::VmmPhysical)];
    device.vmm_mapped_at_peak = account.vmm_mapped_at_peak;
    for (const replay::Failure& failure : replay.failures())
      if (failure.account == id && failure.out_of_memory()) device.failures.push_back(fit_of(failure));
    out.push_back(std::move(device));
  }
  DeviceFragmentation unknown;
  for (const replay::PoolState& pool : replay.pools())
    if (pool.device == trace::kNoDevice) unknown.pools.push_back(pool);
  if (!unknown.pools.empty() && !filter.device) out.push_back(std::move(unknown));
  return out;
}

}  // namespace gpumemtrace::report
