#include "analyzer/replay/device_facts.h"

#include <algorithm>

namespace gpumemtrace::replay {

void DeviceFacts::on(const trace::Context& context) {
  size_t of_device = static_cast<size_t>(
      std::ranges::count_if(contexts_, [&](const ContextMade& c) { return c.device == context.device; }));
  if (of_device >= kContextsKeptPerDevice) {
    ++contexts_not_kept_;
    return;
  }
  contexts_.push_back({context.device, context.primary != 0, std::string(context.uuid), context.free_before,
                       context.free_after, context.total, context.time_ns});
}

void DeviceFacts::on(const trace::Placement& placement) {
  placement_.recorded = true;
  placement_.local_rank = placement.local_rank;
  if (placement.visible_devices_set) placement_.visible_devices = std::string(placement.visible_devices);
}

void DeviceFacts::on(const trace::DeviceState& state, std::vector<NvmlDevice>* failure_states) {
  nvml_seen_ = true;
  auto moment = static_cast<format::DeviceStateMoment>(state.moment);
  filling_ = nullptr;
  if (moment == format::DeviceStateMoment::Start) {
    filling_ = &start_;
  } else if (moment == format::DeviceStateMoment::End) {
    filling_ = &end_;
  } else {
    filling_ = failure_states;
  }
  if (!filling_) return;
  filling_->push_back({moment, state.index, std::string(state.uuid), std::string(state.pci_bus_id),
                       state.device_free, state.device_total, state.time_ns, {}});
}

void DeviceFacts::on(const trace::DeviceProcess& process) {
  if (!filling_ || filling_->empty()) return;
  filling_->back().processes.push_back({process.pid, process.bytes, std::string(process.command)});
}

std::string DeviceFacts::uuid_of(int32_t device) const {
  for (const ContextMade& c : contexts_)
    if (c.device == device && !c.uuid.empty()) return c.uuid;
  return {};
}

std::optional<uint64_t> DeviceFacts::context_cost(int32_t device) const {
  uint64_t sum = 0;
  bool any = false;
  for (const ContextMade& c : contexts_) {
    if (c.device != device) continue;
    std::optional<uint64_t> cost = c.cost();
    if (!cost) return std::nullopt;
    sum += *cost;
    any = true;
  }
  if (!any) return std::nullopt;
  return sum;
}

bool DeviceFacts::has_contexts(int32_t device) const {
  return std::ranges::any_of(contexts_, [&](const ContextMade& c) { return c.device == device; });
}

}  // namespace gpumemtrace::replay
