// "peak", "leaks" and "growth": sites with their stacks.
#include "analyzer/render/json_sections.h"

namespace gpumemtrace::render {

namespace {

void write_sites(JsonWriter& json, std::string_view key, const std::vector<report::SiteFigures>& sites,
                 const report::Stacks& stacks, bool all_memory) {
  json.begin_array(key);
  for (const report::SiteFigures& site : sites) {
    if (!all_memory && site.memory != report::Memory::Device) continue;  // the contract lists device memory
    json.begin_object();
    write_device(json, "device", site.device);
    if (all_memory) json.string("kind", report::memory_name(site.memory));
    write_site_members(json, site.bytes, site.count, stacks[site.stack]);
    json.end_object();
  }
  json.end_array();
}

}  // namespace

void write_peak(JsonWriter& json, const report::PeakModel& peak, const report::Stacks& stacks) {
  write_sites(json, "peak", peak.sites, stacks, false);
}

void write_leaks(JsonWriter& json, const report::LeaksModel& leaks, const report::Stacks& stacks, bool detailed) {
  if (leaks.complete) {
    write_sites(json, "leaks", leaks.sites, stacks, detailed);
    return;
  }
  json.begin_array("leaks");  // only a complete trace says what was never freed
  json.end_array();
  if (detailed) write_sites(json, "live_at_stop", leaks.sites, stacks, true);
}

void write_growth(JsonWriter& json, const report::GrowthModel& growth, const report::Stacks& stacks, bool detailed) {
  json.begin_array("growth");
  for (const report::GrowingSite& site : growth.sites) {
    if (!detailed && site.memory != report::Memory::Device) continue;  // the contract lists device memory
    json.begin_object();
    write_device(json, "device", site.device);
    json.number("bytes", site.bytes);
    json.number("windows", uint64_t{site.rises});
    if (detailed) {
      json.begin_array("floors");
      for (uint64_t floor : site.floors) json.number({}, floor);
      json.end_array();
    }
    write_stack(json, "stack", stacks[site.stack]);
    json.end_object();
  }
  json.end_array();
  json.begin_object("growth_windows");
  json.optional_string("phase", growth.phase.value_or(""));
  json.optional_number("instances", growth.phase ? std::optional<uint64_t>(growth.instances) : std::nullopt);
  json.number("windows", uint64_t{growth.windows});
  json.end_object();
}

}  // namespace gpumemtrace::render
