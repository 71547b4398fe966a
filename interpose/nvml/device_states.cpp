#include "interpose/nvml/device_states.h"

#include <unistd.h>

#include <atomic>

#include "common/nvml_reader.h"
#include "interpose/base/real_dlsym.h"
#include "interpose/base/debug_log.h"
#include "interpose/recording/recorder.h"

namespace gpumemtrace::interpose::nvml_states {

namespace {

enum class Load : int { NotYet, Loading, Ready, Unavailable };
std::atomic<Load> g_load{Load::NotYet};
nvml::Library* g_library = nullptr;  // set once, before g_load becomes Ready or Unavailable; never destroyed
std::atomic<bool> g_started{false};
std::atomic<long> g_started_pid{0};  // a vfork child shares our memory: it must not write our end

// NVML when it is ready, loading it on the first call. A thread that finds another one loading it does not
// wait (that thread may be waiting for the loader lock this one holds): its moment goes unrecorded.
nvml::Library* library() {
  Load state = g_load.load(std::memory_order_acquire);
  if (state == Load::Ready) return g_library;
  if (state != Load::NotYet || !g_load.compare_exchange_strong(state, Load::Loading)) return nullptr;
  auto* library = new nvml::Library(real_dlsym);
  g_library = library;  // kept whether or not NVML is there: what it says why not stays readable
  if (!library->available()) {
    debug_log("NVML not available (%s): the trace has no device states", library->why().c_str());
    g_load.store(Load::Unavailable, std::memory_order_release);
    return nullptr;
  }
  g_load.store(Load::Ready, std::memory_order_release);
  return library;
}

void record_state(format::DeviceStateMoment moment) {
  nvml::SystemState state;
  {
    BusyGuard busy;
    nvml::Library* nvml = library();
    if (!nvml) return;
    state = nvml->read();
  }
  record_event(
      [&](writer::TraceWriter& writer, uint64_t) {
        for (const nvml::GpuDevice& device : state.devices) {
          writer.write(trace::DeviceState{{}, static_cast<uint64_t>(moment), device.index, device.uuid,
                                          device.pci_bus_id, device.free, device.total, device.processes.size()});
          for (const nvml::GpuProcess& process : device.processes)
            writer.write(trace::DeviceProcess{process.pid, process.bytes, process.command});
        }
      },
      false);
}

}  // namespace

void before_allocation() {
  if (g_started.load(std::memory_order_relaxed) || g_started.exchange(true)) return;
  g_started_pid.store(getpid(), std::memory_order_relaxed);
  record_state(format::DeviceStateMoment::Start);
}

void on_out_of_memory() { record_state(format::DeviceStateMoment::OutOfMemory); }

std::optional<DeviceMemory> device_memory(const std::string& uuid) {
  if (uuid.empty()) return std::nullopt;
  BusyGuard busy;
  nvml::Library* nvml = library();
  if (!nvml) return std::nullopt;
  for (const nvml::GpuDevice& device : nvml->read().devices)
    if (device.uuid == uuid && device.memory_known) return DeviceMemory{device.free, device.total};
  return std::nullopt;
}

void at_end() {
  if (g_started_pid.load(std::memory_order_relaxed) == getpid() && tracing_active()) record_state(format::DeviceStateMoment::End);
}

}  // namespace gpumemtrace::interpose::nvml_states
