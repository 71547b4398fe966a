// Fragmentation where an allocator's reserved and used views are known (docs/reports.md, "Fragmentation"):
//   async pools   reserved (what the pool holds from the device) - used (what its allocations hold),
//                 from the pool's last PoolTrim/PoolUsage record, and at each out-of-memory failure;
//                 internal = the pools' used - the requested bytes of the live async allocations
//                 (rounding), external = reserved - used (free space inside the pools);
//   VMM           physical memory (cuMemCreate) - the part of it mapped anywhere (cuMemMap);
//   heaps         a program's own allocator that reports its blocks (annotate.h, the NVTX memory
//                 extension): per heap, reserved vs allocated, internal and external waste, the largest free
//                 block and 1 - largest free / total free (replay/heaps.h), at the end and its peak;
//   failures      whether the request would have fit in free + the pools' unused memory, and, where the
//                 device has heaps, whether it would have fit in their largest free block. The driver
//                 reports no block layout for async pools or the device, so without heaps that is unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/replay/replay.h"
#include "analyzer/replay/windowed_series.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

struct FailureFit {
  uint64_t time_ns = 0;
  uint64_t requested_bytes = 0;
  uint64_t free_bytes = 0;
  bool pools_reported = false;  // the tracer wrote the pools' state with the failure
  uint64_t pool_reserved_bytes = 0;
  uint64_t pool_used_bytes = 0;
  uint64_t external_bytes = 0;             // reserved - used
  std::optional<uint64_t> internal_bytes;  // used - live async bytes; none without pool records
  bool fits_free_plus_unused = false;
  replay::HeapsAtFailure heaps;                  // the device's heaps then
  std::optional<bool> fits_largest_free_block;  // none without heaps
};

// A sub-allocator heap: its figures at the end of the trace (or when it was destroyed: all zero but
// reserved), and its peak of allocated bytes.
struct HeapReport {
  uint64_t id = 0;
  std::string name;
  bool destroyed = false;
  replay::HeapFigures end;
  uint64_t peak_allocated_bytes = 0;
  uint64_t peak_ns = 0;
  // Allocated over time: the most in each slice of the timeline (as `timeline` has them).
  uint64_t series_start_ns = 0;
  uint64_t series_window_ns = 0;
  // Kept as the replay keeps it, made into one figure per slice when rendered: a snapshot's history has a
  // heap per segment, each alive for a few of the slices.
  replay::WindowedSeries<replay::Reduce::Max> allocated_series;
  uint32_t series_open_window = 0;
  std::vector<uint64_t> allocated_windows() const { return allocated_series.windows(series_open_window); }
};

// A device's heaps together, those not destroyed (for a PyTorch snapshot: its segments): the figures summed,
// the largest free block of any of them, and fragmentation = 1 - largest / external of the sum.
struct HeapTotals {
  uint64_t heaps = 0;
  replay::HeapFigures figures;
  // PyTorch's own sums per segment: active_size, the bytes of the blocks allocated or waiting to be freed,
  // and requested_size, what was asked for them.
  uint64_t active_bytes() const { return figures.allocated_bytes + figures.internal_bytes + figures.pending_bytes; }
  uint64_t requested_bytes() const { return figures.allocated_bytes + figures.pending_requested_bytes; }
};

struct DeviceFragmentation {
  std::optional<int32_t> device;  // none: pools whose device the trace never said
  std::vector<replay::PoolState> pools;
  uint64_t vmm_physical_bytes = 0;  // at the end of the trace
  uint64_t vmm_mapped_bytes = 0;
  uint64_t vmm_physical_at_peak = 0;
  uint64_t vmm_mapped_at_peak = 0;
  std::vector<FailureFit> failures;  // out-of-memory failures on the device
  std::vector<HeapReport> heaps;     // in the order they were created
  // The destroyed heaps not in `heaps`: of those, only the ones with the highest peaks are kept
  // (ReplayOptions::destroyed_heaps_kept), the others counted here.
  replay::FoldedHeaps folded_heaps;
  HeapTotals heap_totals;

  // Whether the trace knows anything of this device's fragmentation.
  bool has_figures() const {
    return !pools.empty() || vmm_physical_at_peak > 0 || vmm_physical_bytes > 0 || !failures.empty() ||
           !heaps.empty() || folded_heaps.heaps > 0;
  }
};

struct FragmentationModel {
  std::optional<uint64_t> at_ns;  // the figures are at this moment (the trace read up to it), not at its end
  bool pytorch_segments = false;  // the heaps are PyTorch's segments (a snapshot, or snapshots joined to the trace)
  std::vector<DeviceFragmentation> devices;  // the wanted devices, then pools and heaps of no known device
};

FragmentationModel fragmentation_model(ModelInput& input);

}  // namespace gpumemtrace::report
