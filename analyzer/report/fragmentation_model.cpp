#include "analyzer/report/fragmentation_model.h"

#include <algorithm>

namespace gpumemtrace::report {

namespace {

constexpr size_t kind_index(trace::MemoryKind kind) { return static_cast<size_t>(kind); }

FailureFit fit_of(const replay::Failure& failure) {
  FailureFit fit;
  fit.time_ns = failure.time_ns;
  fit.requested_bytes = failure.requested_bytes;
  fit.free_bytes = failure.device_free;
  fit.pools_reported = !failure.pools.empty();
  for (const replay::PoolState& pool : failure.pools) {
    fit.pool_reserved_bytes += pool.reserved_bytes;
    fit.pool_used_bytes += pool.used_bytes;
  }
  if (fit.pool_reserved_bytes > fit.pool_used_bytes) fit.external_bytes = fit.pool_reserved_bytes - fit.pool_used_bytes;
  uint64_t async_live = failure.kind_bytes[kind_index(trace::MemoryKind::AsyncPool)];
  if (fit.pools_reported)
    fit.internal_bytes = fit.pool_used_bytes > async_live ? fit.pool_used_bytes - async_live : 0;
  fit.fits_free_plus_unused = failure.requested_bytes <= failure.device_free + fit.external_bytes;
  fit.heaps = failure.heaps;
  if (failure.heaps.known()) fit.fits_largest_free_block = failure.requested_bytes <= failure.heaps.largest_free_bytes;
  return fit;
}

void add_to(HeapTotals& totals, const replay::HeapFigures& f) {
  totals.heaps += 1;
  totals.figures.add(f);
}

void add_heaps(DeviceFragmentation& device, const replay::Replay& replay, int32_t device_id) {
  for (const replay::Heap& heap : replay.heaps().heaps()) {
    if (heap.device != device_id) continue;
    const replay::TimeSlices& clock = replay.timeline_clock();
    device.heaps.push_back({heap.id, heap.name, heap.destroyed, heap.figures(), heap.peak_allocated_bytes,
                            heap.peak_ns, clock.origin_ns(), clock.width_ns(),
                            heap.allocated_series, clock.window()});
    if (!heap.destroyed) add_to(device.heap_totals, device.heaps.back().end);
  }
  device.folded_heaps = replay.heaps().folded(device_id);
}

}  // namespace

FragmentationModel fragmentation_model(ModelInput& input) {
  const replay::Replay& replay = input.reserved_replay();
  SiteFilter filter = input.filter(true);
  FragmentationModel model;
  if (uint64_t to = input.analysis().options.selection.to_ns; to != UINT64_MAX) model.at_ns = to;
  model.pytorch_segments = input.trace().heaps_are_pytorch();
  for (replay::AccountId id : replay.accounts().devices()) {
    const replay::Account& account = replay.accounts()[id];
    if (!wanted_account(account, filter)) continue;
    DeviceFragmentation& device = model.devices.emplace_back();
    device.device = device_of(account.device);
    for (const replay::PoolState& pool : replay.pools())
      if (pool.device == account.device) device.pools.push_back(pool);
    device.vmm_physical_bytes = account.kind_bytes[kind_index(trace::MemoryKind::VmmPhysical)];
    device.vmm_mapped_bytes = account.vmm_mapped_bytes;
    device.vmm_physical_at_peak = account.kind_bytes_at_peak[kind_index(trace::MemoryKind::VmmPhysical)];
    device.vmm_mapped_at_peak = account.vmm_mapped_at_peak;
    for (const replay::Failure& failure : replay.failures())
      if (failure.account == id && failure.out_of_memory()) device.failures.push_back(fit_of(failure));
    add_heaps(device, replay, account.device);
  }
  DeviceFragmentation unknown;
  for (const replay::PoolState& pool : replay.pools())
    if (pool.device == trace::kNoDevice) unknown.pools.push_back(pool);
  add_heaps(unknown, replay, trace::kNoDevice);
  if ((!unknown.pools.empty() || !unknown.heaps.empty()) && !filter.device) model.devices.push_back(std::move(unknown));
  return model;
}

}  // namespace gpumemtrace::report
