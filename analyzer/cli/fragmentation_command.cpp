// gpumemtrace fragmentation TRACE: memory held by allocators but not in use (async pools, VMM).
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/cli/report_sections.h"
#include "analyzer/report/fragmentation.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace fragmentation [options] TRACE\n"
    "\n"
    "Memory that allocators held but did not use, where the trace knows both views: stream-ordered memory\n"
    "pools (reserved vs used, from cuMemPoolTrimTo and from what the tracer records at out-of-memory\n"
    "failures) and VMM (physical memory from cuMemCreate vs the part of it mapped). For each out-of-memory\n"
    "failure: internal (rounding) and external (free space in the pools) fragmentation, and whether the\n"
    "request would have fit in free memory plus the pools' unused memory. The largest free block (and so\n"
    "1 - largest free / total free) is not known: the driver reports it for neither pools nor devices.\n";

std::string device_label(const report::DeviceFragmentation& device) {
  return device.device ? fmt::format("device {}", *device.device) : std::string("pools of an unknown device");
}

void append_pool(fmt::memory_buffer& out, const replay::PoolState& pool) {
  auto o = fmt::appender(out);
  fmt::format_to(o, "    pool {:#x}", pool.pool);
  if (!pool.reported) {
    fmt::format_to(o, ": never reported{}\n", pool.destroyed ? " (destroyed)" : "");
    return;
  }
  uint64_t unused = pool.reserved_bytes > pool.used_bytes ? pool.reserved_bytes - pool.used_bytes : 0;
  fmt::format_to(o, ": {} reserved, {} used, {} unused at {}{}\n", format_size(pool.reserved_bytes),
                 format_size(pool.used_bytes), format_size(unused), format_time(pool.time_ns),
                 pool.destroyed ? " (destroyed since)" : "");
}

void append_failure(fmt::memory_buffer& out, const report::FailureFit& fit) {
  const replay::Failure& failure = *fit.failure;
  auto o = fmt::appender(out);
  fmt::format_to(o, "    out of memory at {}: {} requested, {} free", format_time(failure.time_ns),
                 format_size(failure.requested_bytes), format_size(failure.device_free));
  if (failure.pools.empty()) {
    fmt::format_to(o, "; no pool state was recorded\n");
  } else {
    fmt::format_to(o, "; pools {} reserved, {} used: external {}, internal {}\n", format_size(fit.pool_reserved_bytes),
                   format_size(fit.pool_used_bytes), format_size(fit.external_bytes),
                   format_size(fit.internal_bytes.value_or(0)));
  }
  fmt::format_to(o, "      would have fit in free + unused pool memory: {}; in the largest free block: not known\n",
                 fit.fits_free_plus_unused ? "yes" : "no");
}

bool has_figures(const report::DeviceFragmentation& device) {
  return !device.pools.empty() || device.vmm_physical_at_peak > 0 || device.vmm_physical_bytes > 0 ||
         !device.failures.empty();
}

void write_json(ReportContext& context, JsonTree& json) {
  json.begin_array("devices");
  for (const report::DeviceFragmentation& device : report::fragmentation(context.replay(), context.filter())) {
    json.begin_object();
    write_device(json, "device", device.device.value_or(trace::kNoDevice));
    json.begin_array("pools");
    for (const replay::PoolState& pool : device.pools) {
      json.begin_object();
      json.string("pool", fmt::format("{:#x}", pool.pool));
      json.boolean("reported", pool.reported);
      json.number("reserved_bytes", pool.reserved_bytes);
      json.number("used_bytes", pool.used_bytes);
      json.number("time_ns", pool.time_ns);
      json.end_object();
    }
    json.end_array();
    json.begin_object("vmm");
    json.number("physical_bytes", device.vmm_physical_bytes);
    json.number("mapped_bytes", device.vmm_mapped_bytes);
    json.number("physical_at_peak_bytes", device.vmm_physical_at_peak);
    json.number("mapped_at_peak_bytes", device.vmm_mapped_at_peak);
    json.end_object();
    json.begin_array("failures");
    for (const report::FailureFit& fit : device.failures) {
      json.begin_object();
      json.number("time_ns", fit.failure->time_ns);
      json.number("requested_bytes", fit.failure->requested_bytes);
      json.number("free_bytes", fit.failure->device_free);
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
    json.end_object();
  }
  json.end_array();
}

int fragmentation_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{"fragmentation", kHelp, 10, false,
                                        [](ReportContext& c, fmt::memory_buffer& out) {
                                          append_fragmentation_text(c, out, true);
                                        },
                                        write_json});
}

}  // namespace

void append_fragmentation_text(ReportContext& context, fmt::memory_buffer& out, bool detailed) {
  auto o = fmt::appender(out);
  bool any = false;
  for (const report::DeviceFragmentation& device : report::fragmentation(context.replay(), context.filter())) {
    if (!has_figures(device)) continue;
    if (!any) fmt::format_to(o, "fragmentation (memory allocators held but did not use):\n");
    any = true;
    fmt::format_to(o, "  {}\n", device_label(device));
    for (const replay::PoolState& pool : device.pools) append_pool(out, pool);
    if (device.vmm_physical_at_peak > 0 || device.vmm_physical_bytes > 0) {
      fmt::format_to(o, "    VMM at the peak: {} physical, {} of it mapped; at the end: {} physical, {} mapped\n",
                     format_size(device.vmm_physical_at_peak), format_size(device.vmm_mapped_at_peak),
                     format_size(device.vmm_physical_bytes), format_size(device.vmm_mapped_bytes));
    }
    if (detailed)
      for (const report::FailureFit& fit : device.failures) append_failure(out, fit);
  }
  if (!any)
    fmt::format_to(o, "fragmentation: not known (no memory pool state or VMM memory in this trace)\n");
  out.push_back('\n');
}

extern const Command fragmentation_command;
const Command fragmentation_command{"fragmentation", "memory held by pools and VMM but not in use", kHelp,
                                   fragmentation_main};

}  // namespace gpumemtrace::cli
