#include "analyzer/render/json_sections.h"

namespace gpumemtrace::render {

namespace {

void write_pools(JsonWriter& json, const std::vector<replay::PoolState>& pools) {
  json.begin_array("pools");
  for (const replay::PoolState& pool : pools) {
    json.begin_object();
    json.string("pool", fmt::format("{:#x}", pool.pool));
    json.boolean("reported", pool.reported);
    json.number("reserved_bytes", pool.reserved_bytes);
    json.number("used_bytes", pool.used_bytes);
    json.number("time_ns", pool.time_ns);
    json.optional_number("release_threshold_bytes", pool.release_threshold);
    json.end_object();
  }
  json.end_array();
}

void write_failures(JsonWriter& json, const std::vector<report::FailureFit>& failures) {
  json.begin_array("failures");
  for (const report::FailureFit& fit : failures) {
    json.begin_object();
    json.number("time_ns", fit.time_ns);
    json.number("requested_bytes", fit.requested_bytes);
    json.number("free_bytes", fit.free_bytes);
    json.number("pool_reserved_bytes", fit.pool_reserved_bytes);
    json.number("pool_used_bytes", fit.pool_used_bytes);
    json.number("external_bytes", fit.external_bytes);
    json.optional_number("internal_bytes", fit.internal_bytes);
    json.boolean("fits_free_plus_unused", fit.fits_free_plus_unused);
    if (fit.fits_largest_free_block) {
      json.number("heap_free_bytes", fit.heaps.free_bytes);
      json.number("largest_free_block_bytes", fit.heaps.largest_free_bytes);
      json.boolean("fits_largest_free_block", *fit.fits_largest_free_block);
    } else {
      json.null("heap_free_bytes");
      json.null("largest_free_block_bytes");
      json.null("fits_largest_free_block");
    }
    json.end_object();
  }
  json.end_array();
}

// The fields of HeapFigures the per-heap and the total objects share.
void write_heap_figures(JsonWriter& json, const replay::HeapFigures& f) {
#define GPUMEMTRACE_FIGURE_JSON(member, json_key, combine) \
  if (std::string_view(json_key) != "") json.number(json_key, f.member);
  GPUMEMTRACE_HEAP_FIGURES(GPUMEMTRACE_FIGURE_JSON)
#undef GPUMEMTRACE_FIGURE_JSON
  json.real("fragmentation", f.fragmentation());
}

void write_heap_totals(JsonWriter& json, const report::HeapTotals& totals) {
  if (totals.heaps == 0) {
    json.null("heap_totals");
    return;
  }
  json.begin_object("heap_totals");
  json.number("heaps", totals.heaps);
  write_heap_figures(json, totals.figures);
  json.number("active_bytes", totals.active_bytes());
  json.number("requested_bytes", totals.requested_bytes());
  json.end_object();
}

void write_heaps(JsonWriter& json, const std::vector<report::HeapReport>& heaps) {
  json.begin_array("heaps");
  for (const report::HeapReport& heap : heaps) {
    const replay::HeapFigures& f = heap.end;
    json.begin_object();
    json.number("heap", heap.id);
    json.string("name", heap.name);
    json.boolean("destroyed", heap.destroyed);
    write_heap_figures(json, f);
    json.number("peak_allocated_bytes", heap.peak_allocated_bytes);
    json.number("peak_time_ns", heap.peak_ns);
    json.number("series_start_ns", heap.series_start_ns);
    json.number("series_window_ns", heap.series_window_ns);
    json.begin_array("allocated_series_bytes");
    for (uint64_t bytes : heap.allocated_windows()) json.number({}, bytes);
    json.end_array();
    json.end_object();
  }
  json.end_array();
}

}  // namespace

void write_fragmentation(JsonWriter& json, std::string_view key, const report::FragmentationModel& fragmentation) {
  json.begin_array(key);
  for (const report::DeviceFragmentation& device : fragmentation.devices) {
    json.begin_object();
    write_device(json, "device", device.device);
    write_pools(json, device.pools);
    json.begin_object("vmm");
    json.number("physical_bytes", device.vmm_physical_bytes);
    json.number("mapped_bytes", device.vmm_mapped_bytes);
    json.number("physical_at_peak_bytes", device.vmm_physical_at_peak);
    json.number("mapped_at_peak_bytes", device.vmm_mapped_at_peak);
    json.end_object();
    write_failures(json, device.failures);
    write_heaps(json, device.heaps);
    // The destroyed heaps past those kept (the highest peaks), which "heaps" does not list.
    json.begin_object("unlisted_destroyed_heaps");
    json.number("heaps", device.folded_heaps.heaps);
    json.number("reserved_bytes", device.folded_heaps.reserved_bytes);
    json.number("peak_allocated_bytes", device.folded_heaps.peak_allocated_bytes);
    json.end_object();
    write_heap_totals(json, device.heap_totals);
    json.end_object();
  }
  json.end_array();
}

}  // namespace gpumemtrace::render
