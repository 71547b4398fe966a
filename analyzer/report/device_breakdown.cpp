#include "analyzer/report/device_breakdown.h"

#include <algorithm>
#include <map>

#include "analyzer/report/memory_owners.h"

namespace gpumemtrace::report {

namespace {

// NVML's state of the failure's device: the one with its UUID, or the only one when the UUID is unknown.
const replay::NvmlDevice* nvml_device(const replay::Failure& failure, const std::string& uuid) {
  for (const replay::NvmlDevice& device : failure.nvml)
    if (!uuid.empty() && device.uuid == uuid) return &device;
  if (uuid.empty() && failure.nvml.size() == 1) return &failure.nvml.front();
  return nullptr;
}

}  // namespace

std::string_view context_source_name(ContextSource source) {
  switch (source) {
    case ContextSource::Unknown: return "unknown";
    case ContextSource::Measured: return "measured";
    case ContextSource::NvmlProcess: return "nvml-process";
  }
  return "?";
}

uint64_t DeviceBreakdown::others_bytes() const {
  uint64_t sum = 0;
  for (const DeviceProcessBytes& process : others) sum += process.bytes;
  return sum + unlisted_used_bytes;
}

uint64_t DeviceBreakdown::framework_bytes() const {
  uint64_t sum = 0;
  for (const OwnerBytes& owner : owners)
    if (owner.framework) sum += owner.bytes;
  return sum;
}

std::optional<DeviceBreakdown> device_breakdown(ModelInput& input, const replay::Failure& failure,
                                                uint64_t pool_unused_bytes) {
  if (failure.device == trace::kNoDevice || failure.device_total == 0) return std::nullopt;
  const replay::Replay& replay = input.reserved_replay();
  const replay::DeviceFacts& facts = replay.device_facts();
  DeviceBreakdown out;
  out.total_bytes = failure.device_total;
  out.free_bytes = failure.device_free;
  out.uuid = facts.uuid_of(failure.device);

  std::map<std::string, uint64_t> by_owner;
  uint64_t held = 0;
  for (const replay::SiteShare& share : failure.live_set) {
    by_owner[std::string(memory_owner(input.frames(replay.sites()[share.site].stack)))] += share.bytes;
    held += share.bytes;
  }
  for (const auto& [owner, bytes] : by_owner) out.owners.push_back({owner, bytes, is_framework_owner(owner)});
  std::ranges::stable_sort(out.owners, [](const OwnerBytes& a, const OwnerBytes& b) { return a.bytes > b.bytes; });
  out.unlisted_bytes = failure.unlisted_bytes;
  held += out.unlisted_bytes;
  if (!failure.has_detail) {
    out.unlisted_bytes = failure.live_bytes;
    held = failure.live_bytes;
  }
  out.pool_unused_bytes = pool_unused_bytes;
  held += pool_unused_bytes;

  const replay::NvmlDevice* nvml = nvml_device(failure, out.uuid);
  std::optional<uint64_t> own_nvml_bytes;
  if (nvml) {
    out.others_known = true;
    uint64_t listed = 0;
    for (const replay::NvmlProcess& process : nvml->processes) listed += process.bytes;
    uint64_t used = nvml->total > nvml->free ? nvml->total - nvml->free : 0;
    out.unlisted_used_bytes = used > listed ? used - listed : 0;
    for (const replay::NvmlProcess& process : nvml->processes) {
      if (process.pid == input.trace().pid)
        own_nvml_bytes = process.bytes;
      else
        out.others.push_back({process.pid, process.command, process.bytes});
    }
    std::ranges::stable_sort(out.others, [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  } else if (!facts.nvml_seen()) {
    out.unseen.push_back("other processes: NVML was not available when the trace was made (their memory is in unaccounted)");
  } else {
    out.unseen.push_back("other processes: NVML did not report this device at the failure (their memory is in unaccounted)");
  }

  if (std::optional<uint64_t> measured = facts.context_cost(failure.device)) {
    out.context_source = ContextSource::Measured;
    out.context_bytes = *measured;
  } else if (own_nvml_bytes) {
    out.context_source = ContextSource::NvmlProcess;
    out.context_bytes = *own_nvml_bytes > held ? *own_nvml_bytes - held : 0;
  } else {
    out.unseen.push_back(facts.has_contexts(failure.device)
                             ? "the CUDA context: its cost was not measured (NVML was not available; it is in unaccounted)"
                             : "the CUDA context: the trace records no context on this device (it is in unaccounted)");
  }

  int64_t parts = static_cast<int64_t>(out.free_bytes + held + out.context_bytes + out.others_bytes());
  out.unaccounted_bytes = static_cast<int64_t>(out.total_bytes) - parts;
  return out;
}

}  // namespace gpumemtrace::report
