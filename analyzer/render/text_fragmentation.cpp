#include <algorithm>

#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

std::string device_label(const report::DeviceFragmentation& device) {
  return device.device ? fmt::format("device {}", *device.device) : std::string("pools and heaps of an unknown device");
}

void append_pool(fmt::memory_buffer& out, const replay::PoolState& pool) {
  auto o = fmt::appender(out);
  fmt::format_to(o, "    pool {:#x}", pool.pool);
  if (!pool.reported) {
    fmt::format_to(o, ": never reported{}\n", pool.destroyed ? " (destroyed)" : "");
    return;
  }
  uint64_t unused = pool.reserved_bytes > pool.used_bytes ? pool.reserved_bytes - pool.used_bytes : 0;
  fmt::format_to(o, ": {} reserved, {} used, {} unused at {}{}", format_size(pool.reserved_bytes),
                 format_size(pool.used_bytes), format_size(unused), format_time(pool.time_ns),
                 pool.destroyed ? " (destroyed since)" : "");
  // The threshold is why freed memory stayed reserved: the pool keeps up to it when it could give back.
  if (pool.release_threshold)
    fmt::format_to(o, "; release threshold {}{}", format_size(*pool.release_threshold),
                   unused > 0 && unused <= *pool.release_threshold ? " (keeps the unused memory)" : "");
  fmt::format_to(o, "\n");
}

void append_failure(fmt::memory_buffer& out, const report::FailureFit& fit) {
  auto o = fmt::appender(out);
  fmt::format_to(o, "    out of memory at {}: {} requested, {} free", format_time(fit.time_ns),
                 format_size(fit.requested_bytes), format_size(fit.free_bytes));
  if (!fit.pools_reported) {
    fmt::format_to(o, "; no pool state was recorded\n");
  } else {
    fmt::format_to(o, "; pools {} reserved, {} used: external {}, internal {}\n", format_size(fit.pool_reserved_bytes),
                   format_size(fit.pool_used_bytes), format_size(fit.external_bytes),
                   format_size(fit.internal_bytes.value_or(0)));
  }
  fmt::format_to(o, "      would have fit in free + unused pool memory: {}; ", fit.fits_free_plus_unused ? "yes" : "no");
  if (!fit.fits_largest_free_block) {
    fmt::format_to(o, "in the largest free block: not known\n");
    return;
  }
  fmt::format_to(o, "in the largest free block of a heap ({} of {} free): {}\n", format_size(fit.heaps.largest_free_bytes),
                 format_size(fit.heaps.free_bytes), *fit.fits_largest_free_block ? "yes" : "no");
}

// A heap, or one of PyTorch's segments (its name says which: "segment 0x7f… (large pool)").
void append_heap(fmt::memory_buffer& out, const report::HeapReport& heap, bool pytorch) {
  auto o = fmt::appender(out);
  const replay::HeapFigures& f = heap.end;
  if (pytorch)
    fmt::format_to(o, "    {}{}", terminal_text(heap.name), heap.destroyed ? " (freed)" : "");
  else
    fmt::format_to(o, "    heap {} \"{}\"{}", heap.id, terminal_text(heap.name), heap.destroyed ? " (destroyed)" : "");
  fmt::format_to(o, ": {} reserved, {} allocated in {} (peak {} at {})",
                 f.reserved_bytes ? format_size(f.reserved_bytes) : "unknown",
                 format_size(f.allocated_bytes), counted(f.blocks, "block"), format_size(heap.peak_allocated_bytes),
                 format_time(heap.peak_ns));
  if (heap.destroyed || f.reserved_bytes == 0) {
    fmt::format_to(o, "\n");
    return;
  }
  fmt::format_to(o, "\n      internal {}, external {}, largest free block {}, fragmentation {:.2f}\n",
                 format_size(f.internal_bytes), format_size(f.external_bytes), format_size(f.largest_free_bytes),
                 f.fragmentation());
  // A long history is drawn in at most a line's width: each character then covers several slices.
  MostPerSlice series = most_per_slice(heap.allocated_windows(), 60);
  fmt::format_to(o, "      allocated over time (the most in each slice of {}): {}\n",
                 format_time(heap.series_window_ns * series.merged), sparkline(series.values));
}

// The heaps together; for a PyTorch snapshot its segments, in the terms of _memory_viz.py stats.
void append_heap_totals(fmt::memory_buffer& out, const report::HeapTotals& totals, bool pytorch) {
  auto o = fmt::appender(out);
  const replay::HeapFigures& f = totals.figures;
  fmt::format_to(o, "    {}{} {}: {} reserved = {} allocated + {} internal free (rounding) + {} external free\n",
                 pytorch ? "PyTorch's " : "", totals.heaps, pytorch ? "segments" : "heaps", format_size(f.reserved_bytes), format_size(f.allocated_bytes),
                 format_size(f.internal_bytes), format_size(f.external_bytes));
  fmt::format_to(o, "      {} blocks allocated, {} free blocks", f.blocks, f.free_blocks);
  if (f.pending_blocks)
    fmt::format_to(o, ", {} blocks ({}) freed but waiting for their streams (counted as external free)",
                   f.pending_blocks, format_size(f.pending_bytes));
  fmt::format_to(o, "; largest free block {}, fragmentation {:.2f}\n", format_size(f.largest_free_bytes),
                 f.fragmentation());
  fmt::format_to(o, "      active (allocated or waiting to be freed) {}, requested {}\n",
                 format_size(totals.active_bytes()), format_size(totals.requested_bytes()));
}

// The heaps worth a line each: all of a few; of many, the live ones with the most free memory, then the
// largest; destroyed ones, which hold nothing any more, last.
void append_heaps(fmt::memory_buffer& out, const report::DeviceFragmentation& device, bool pytorch) {
  constexpr size_t kListed = 10;
  const std::vector<report::HeapReport>& heaps = device.heaps;
  const replay::FoldedHeaps& folded = device.folded_heaps;
  std::string_view noun = pytorch ? "segments" : "heaps";
  // Destroyed heaps past those kept are only counted: say how many, and that --json does not list them.
  auto folded_line = [&](std::string_view lead) {
    fmt::format_to(fmt::appender(out), "    {}{} {} {} only counted ({} reserved in all, at most {} allocated in any)",
                   lead, folded.heaps, pytorch ? "freed" : "destroyed", noun, format_size(folded.reserved_bytes),
                   format_size(folded.peak_allocated_bytes));
  };
  if (heaps.size() <= kListed) {
    for (const report::HeapReport& heap : heaps) append_heap(out, heap, pytorch);
    if (folded.heaps > 0) {
      folded_line("and ");
      out.push_back('\n');
    }
    return;
  }
  std::vector<const report::HeapReport*> listed;
  for (const report::HeapReport& heap : heaps) listed.push_back(&heap);
  std::stable_sort(listed.begin(), listed.end(), [](const report::HeapReport* a, const report::HeapReport* b) {
    if (a->destroyed != b->destroyed) return b->destroyed;
    if (a->end.external_bytes != b->end.external_bytes) return a->end.external_bytes > b->end.external_bytes;
    return a->end.reserved_bytes > b->end.reserved_bytes;
  });
  listed.resize(kListed);
  fmt::format_to(fmt::appender(out), "    the {} {} with the most free memory:\n", kListed, noun);
  for (const report::HeapReport* heap : listed) append_heap(out, *heap, pytorch);
  if (folded.heaps == 0) {
    fmt::format_to(fmt::appender(out), "    ... and {} more {} (--json lists them all)\n", heaps.size() - kListed, noun);
    return;
  }
  fmt::format_to(fmt::appender(out), "    ... and {} more {}: {} that --json lists, and\n", heaps.size() - kListed + folded.heaps,
                 noun, heaps.size() - kListed);
  folded_line("");
  out.push_back('\n');
}

}  // namespace

void append_fragmentation(fmt::memory_buffer& out, const report::FragmentationModel& fragmentation, bool detailed) {
  auto o = fmt::appender(out);
  bool any = false;
  for (const report::DeviceFragmentation& device : fragmentation.devices) {
    if (!device.has_figures()) continue;
    if (!any)
      fmt::format_to(o, "fragmentation{} (memory allocators held but did not use):\n",
                     fragmentation.at_ns ? " at " + format_time(*fragmentation.at_ns) : "");
    any = true;
    fmt::format_to(o, "  {}\n", device_label(device));
    for (const replay::PoolState& pool : device.pools) append_pool(out, pool);
    if (device.heap_totals.heaps > 1) append_heap_totals(out, device.heap_totals, fragmentation.pytorch_segments);
    append_heaps(out, device, fragmentation.pytorch_segments);
    if (device.vmm_physical_at_peak > 0 || device.vmm_physical_bytes > 0) {
      fmt::format_to(o, "    VMM at the peak: {} physical, {} of it mapped; at {}: {} physical, {} mapped\n",
                     format_size(device.vmm_physical_at_peak), format_size(device.vmm_mapped_at_peak),
                     fragmentation.at_ns ? format_time(*fragmentation.at_ns) : "the end",
                     format_size(device.vmm_physical_bytes), format_size(device.vmm_mapped_bytes));
    }
    if (detailed)
      for (const report::FailureFit& fit : device.failures) append_failure(out, fit);
  }
  if (!any) fmt::format_to(o, "fragmentation: not known (no memory pool state, VMM memory or heaps in this trace)\n");
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
