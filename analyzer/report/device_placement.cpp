#include "analyzer/report/device_placement.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/size_units.h"

namespace gpumemtrace::report {

namespace {

// The ordinal a local rank should use: its own number, or 0 when CUDA_VISIBLE_DEVICES leaves one device.
int64_t expected_ordinal(int64_t local_rank, const std::optional<std::string>& visible) {
  if (visible && !visible->empty() && visible->find(',') == std::string::npos) return 0;
  return local_rank;
}

std::string device_list(const std::vector<int32_t>& devices) {
  std::string out;
  for (int32_t device : devices) out += (out.empty() ? "" : ", ") + std::to_string(device);
  return out;
}

}  // namespace

std::vector<std::string> DevicePlacement::allocating_uuids() const {
  std::vector<std::string> out;
  for (const DeviceUse& use : devices)
    if (use.allocations > 0 && !use.uuid.empty()) out.push_back(use.uuid);
  return out;
}

std::string wrong_gpu_remedy() {
  return "give each process one GPU before its first CUDA call: torch.cuda.set_device(local_rank) (cudaSetDevice), or "
         "CUDA_VISIBLE_DEVICES set to that GPU alone for each rank; nothing may touch another device first (a tensor "
         "made with device='cuda' or .cuda() before set_device lands on device 0 and makes a context there)";
}

DevicePlacement device_placement(const replay::Replay& replay) {
  const replay::DeviceFacts& facts = replay.device_facts();
  DevicePlacement out;
  out.contexts_recorded = !facts.contexts().empty();
  out.local_rank = facts.placement().local_rank;
  out.visible_devices = facts.placement().visible_devices;
  out.end_ns = replay.end_time_ns();

  auto use_of = [&](int32_t device) -> DeviceUse& {
    auto it = std::ranges::find_if(out.devices, [&](const DeviceUse& u) { return u.device == device; });
    if (it != out.devices.end()) return *it;
    out.devices.push_back({device, facts.uuid_of(device), 0, facts.context_cost(device), 0});
    return out.devices.back();
  };
  for (const replay::ContextMade& context : facts.contexts())
    if (context.device != trace::kNoDevice) ++use_of(context.device).contexts;
  for (replay::AccountId id : replay.accounts().devices()) {
    const replay::Account& account = replay.accounts()[id];
    if (account.allocations > 0) use_of(account.device).allocations += account.allocations;
  }
  std::ranges::sort(out.devices, [](const DeviceUse& a, const DeviceUse& b) { return a.device < b.device; });

  std::vector<int32_t> allocating;
  for (const DeviceUse& use : out.devices)
    if (use.allocations > 0) allocating.push_back(use.device);
  if (!allocating.empty()) {
    for (const DeviceUse& use : out.devices) {
      if (use.allocations > 0 || use.contexts == 0) continue;
      out.findings.push_back(fmt::format(
          "a context on device {}{} ({}) but every allocation is on device {}", use.device,
          use.uuid.empty() ? "" : " " + use.uuid,
          use.context_bytes ? "it took " + format_size(*use.context_bytes) : "its cost not measured",
          device_list(allocating)));
    }
  }
  if (out.local_rank >= 0 && !allocating.empty()) {
    int64_t expected = expected_ordinal(out.local_rank, out.visible_devices);
    if (allocating.size() > 1 || allocating.front() != expected)
      out.findings.push_back(fmt::format("local rank {} allocates on device {}, not on device {} that its local rank "
                                         "implies{}",
                                         out.local_rank, device_list(allocating), expected,
                                         out.visible_devices ? " (CUDA_VISIBLE_DEVICES=" + *out.visible_devices + ")"
                                                             : std::string()));
  }
  if (!out.findings.empty()) out.remedy = wrong_gpu_remedy();
  return out;
}

}  // namespace gpumemtrace::report
