// gpumemtrace info [--json] [--sim]: the devices NVML sees, their memory, and the processes holding it, with the
// command that would free each one's memory. It never kills anything.
#include <fmt/core.h>

#include <filesystem>
#include <optional>
#include <string>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/device_info.h"
#include "analyzer/cli/standard_output.h"
#include "analyzer/cli/tracer_layout.h"
#include "analyzer/render/json_writer.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kInfoHelp =
    "usage: gpumemtrace info [--json] [--sim]\n"
    "\n"
    "Shows the GPUs NVML sees (name, UUID, PCI bus id, total and free memory), the driver and CUDA runtime\n"
    "versions, and every process holding device memory: pid, user, command line and bytes, flagged when its\n"
    "parent is gone (its parent is pid 1 or no longer exists) or when it is idle (it used no CPU time during a\n"
    "0.5 s sampling window: stuck, finished but alive, or waiting). For each it prints `kill PID`, the command\n"
    "that would free its memory; gpumemtrace never kills anything. Without NVML (libnvidia-ml.so.1, or\n"
    "$GPUMEMTRACE_NVML_LIBRARY) it says so and shows what it could see.\n";

constexpr std::string_view kInfoExitStatus =
    "Exit status: 0 (also without NVML), 1 for a bad command line, 3 when the output cannot be written.\n";

std::string cuda_version_text(int version) {
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

std::string flags_text(const HolderProcess& holder) {
  std::string flags;
  if (!holder.visible) flags += " [not visible here]";
  if (holder.parent_gone) flags += " [parent gone]";
  if (holder.idle.value_or(false)) flags += " [idle]";
  return flags;
}

std::string render_text(const InfoReport& report) {
  std::string out;
  std::string runtime = report.runtime.version
                            ? fmt::format("CUDA {} ({})", cuda_version_text(*report.runtime.version),
                                          report.runtime.library)
                            : fmt::format("not found ({})", report.runtime.library);
  if (!report.nvml_available) {
    out += fmt::format("NVML not available: {}. Devices and the processes holding their memory cannot be seen.\n",
                       report.nvml_unavailable);
    out += fmt::format("CUDA runtime: {}\n", runtime);
    return out;
  }
  out += fmt::format("driver {} (CUDA {}), CUDA runtime: {}\n", report.driver_version,
                     cuda_version_text(report.cuda_driver_version), runtime);
  if (report.devices.empty()) out += "NVML sees no GPU.\n";
  for (const DeviceInfo& info : report.devices) {
    const nvml::GpuDevice& device = info.device;
    out += fmt::format("\nGPU {}: {}  {}  PCI {}\n", device.index, device.name, device.uuid, device.pci_bus_id);
    if (device.memory_known)
      out += fmt::format("  memory: {} total, {} free\n", format_size(device.total), format_size(device.free));
    if (!device.processes_known) {
      out += "  processes: NVML would not list them\n";
      continue;
    }
    if (info.holders.empty()) {
      out += "  no process holds memory\n";
      continue;
    }
    out += "  processes holding memory:\n";
    for (const HolderProcess& holder : info.holders)
      out += fmt::format("    pid {}  {}  {}  {}{}\n      to free it: {}\n", holder.nvml.pid,
                         holder.user.empty() ? "?" : holder.user, format_size(holder.nvml.bytes),
                         holder.command_line, flags_text(holder), holder.free_command());
  }
  if (report.idle_window.count() > 0)
    out += fmt::format("\nidle: no CPU time used in {} ms. gpumemtrace never kills anything.\n",
                       report.idle_window.count());
  return out;
}

std::string render_json(const InfoReport& report) {
  fmt::memory_buffer buffer;
  {
    render::JsonObject json(buffer);
    json.begin_object("nvml");
    json.boolean("available", report.nvml_available);
    json.optional_string("unavailable", report.nvml_unavailable);
    json.end_object();
    json.optional_string("driver_version", report.driver_version);
    json.optional_number("cuda_driver_version", report.cuda_driver_version
                                                    ? std::optional<uint64_t>(report.cuda_driver_version)
                                                    : std::nullopt);
    json.begin_object("runtime");
    json.string("library", report.runtime.library);
    json.optional_number("version", report.runtime.version ? std::optional<uint64_t>(*report.runtime.version)
                                                            : std::nullopt);
    json.end_object();
    json.number("idle_window_ms", static_cast<uint64_t>(report.idle_window.count()));
    json.begin_array("devices");
    for (const DeviceInfo& info : report.devices) {
      const nvml::GpuDevice& device = info.device;
      json.begin_object();
      json.number("index", uint64_t{device.index});
      json.string("name", device.name);
      json.string("uuid", device.uuid);
      json.string("pci_bus_id", device.pci_bus_id);
      json.optional_number("total", device.memory_known ? std::optional<uint64_t>(device.total) : std::nullopt);
      json.optional_number("free", device.memory_known ? std::optional<uint64_t>(device.free) : std::nullopt);
      json.boolean("processes_known", device.processes_known);
      json.begin_array("processes");
      for (const HolderProcess& holder : info.holders) {
        json.begin_object();
        json.number("pid", uint64_t{holder.nvml.pid});
        json.number("bytes", holder.nvml.bytes);
        json.string("command", holder.nvml.command);
        json.string("command_line", holder.command_line);
        json.optional_string("user", holder.user);
        json.optional_number("ppid", holder.ppid && *holder.ppid >= 0
                                         ? std::optional<uint64_t>(static_cast<uint64_t>(*holder.ppid))
                                         : std::nullopt);
        json.boolean("visible", holder.visible);
        json.boolean("parent_gone", holder.parent_gone);
        if (holder.idle)
          json.boolean("idle", *holder.idle);
        else
          json.null("idle");
        json.string("free_command", holder.free_command());
        json.end_object();
      }
      json.end_array();
      json.end_object();
    }
    json.end_array();
  }
  buffer.push_back('\n');
  return fmt::to_string(buffer);
}

int info_main(std::span<const std::string> args) {
  bool json = false, sim = false;
  std::vector<std::string> operands;
  CommandLine line(kInfoHelp, kInfoExitStatus);
  line.flag("--json", json, "JSON on stdout instead of text");
  line.flag("--sim", sim, "read the simulated device's NVML and runtime (like run --sim)");
  line.operands("operand", operands, 0);
  if (!line.parse(args)) return kExitOk;
  InfoOptions options;
  options.runtime_library = "libcudart.so.13";
  if (sim) {
    std::optional<std::filesystem::path> sim_dir = find_sim_dir();
    if (!sim_dir) {
      auto candidates = sim_dir_candidates();
      fmt::print(stderr, "gpumemtrace: the simulated device is not installed (looked in {} and {})\n",
                 candidates[0].string(), candidates[1].string());
      return kExitUsage;
    }
    options.nvml_library = (*sim_dir / "libnvidia-ml.so.1").string();
    options.runtime_library = (*sim_dir / "libcudart.so.13").string();
  }
  InfoReport report = gather_info(options);
  write_stdout(json ? render_json(report) : render_text(report));
  return kExitOk;
}

}  // namespace

extern const Command info_command{"info", "the GPUs, their memory and the processes holding it (never kills)",
                                  info_main};

}  // namespace gpumemtrace::cli
