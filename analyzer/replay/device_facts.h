// What a trace says about the devices beyond this process's allocations: the contexts it made (Context
// records: device, UUID, what each cost), the devices as NVML showed them (DeviceState and its DeviceProcess
// records) and the variables that placed the process (Placement). Bounded: the NVML states of the start and
// the end, and the first contexts of each device.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpumemtrace/trace_records.h"

namespace gpumemtrace::replay {

struct ContextMade {
  int32_t device = trace::kNoDevice;
  bool primary = false;
  std::string uuid;
  uint64_t free_before = 0;  // NVML's; 0, 0 and 0 when NVML was not available
  uint64_t free_after = 0;
  uint64_t total = 0;
  uint64_t time_ns = 0;

  // The free memory the context took; none when NVML did not say, or when the device's free memory grew meanwhile
  // (another process let go of memory: the cost cannot be told).
  std::optional<uint64_t> cost() const {
    if (total == 0 || free_after > free_before) return std::nullopt;
    return free_before - free_after;
  }
};

struct NvmlProcess {
  uint64_t pid = 0;
  uint64_t bytes = 0;
  std::string command;
};

// One DeviceState with its processes.
struct NvmlDevice {
  format::DeviceStateMoment moment{};
  uint64_t index = 0;
  std::string uuid;
  std::string pci_bus_id;
  uint64_t free = 0;  // 0 and 0 when NVML would not say
  uint64_t total = 0;
  uint64_t time_ns = 0;
  std::vector<NvmlProcess> processes;
};

struct PlacementVariables {
  bool recorded = false;  // a Placement record: LOCAL_RANK or CUDA_VISIBLE_DEVICES was set
  int64_t local_rank = -1;
  std::optional<std::string> visible_devices;  // none: unset
};

class DeviceFacts {
 public:
  static constexpr size_t kContextsKeptPerDevice = 8;

  void on(const trace::Context& context);
  void on(const trace::Placement& placement);
  // A DeviceState: the start's and the end's are kept here; an out-of-memory one goes to `failure_states` (the
  // failure it follows), or nowhere when null.
  void on(const trace::DeviceState& state, std::vector<NvmlDevice>* failure_states);
  void on(const trace::DeviceProcess& process);
  // Any other record: the DeviceProcess records that may still come go nowhere (the list of a failure they would
  // go to may move as failures are added).
  void end_state() { filling_ = nullptr; }

  // The contexts made, in trace order (the first kContextsKeptPerDevice of each device).
  const std::vector<ContextMade>& contexts() const { return contexts_; }
  uint64_t contexts_not_kept() const { return contexts_not_kept_; }
  // The UUID of a CUDA ordinal, from its contexts; empty when none said.
  std::string uuid_of(int32_t device) const;
  // The free memory the contexts of a device took, summed; none when any of them could not be measured or the
  // device had none recorded.
  std::optional<uint64_t> context_cost(int32_t device) const;
  bool has_contexts(int32_t device) const;

  bool nvml_seen() const { return nvml_seen_; }
  const std::vector<NvmlDevice>& at_start() const { return start_; }
  const std::vector<NvmlDevice>& at_end() const { return end_; }
  const PlacementVariables& placement() const { return placement_; }

 private:
  std::vector<ContextMade> contexts_;
  uint64_t contexts_not_kept_ = 0;
  bool nvml_seen_ = false;
  std::vector<NvmlDevice> start_;
  std::vector<NvmlDevice> end_;
  std::vector<NvmlDevice>* filling_ = nullptr;  // the list whose last state the DeviceProcess records go to
  PlacementVariables placement_;
};

}  // namespace gpumemtrace::replay
