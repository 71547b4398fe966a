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
    json.null("largest_free_block_bytes");
    json.null("fits_largest_free_block");
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
    json.end_object();
  }
  json.end_array();
}

}  // namespace gpumemtrace::render
