#include "sim_config.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "common/size_units.h"

namespace gpumemtrace::sim {

namespace {

constexpr uint64_t kMinCapacity = 2ull << 20;
constexpr uint64_t kMaxCapacity = 1ull << 40;

struct Reporter {
  const char* who;
  const char* consequence;
  bool operator()(const char* var, const char* value, const char* what) const {
    std::fprintf(stderr, "gpumemtrace simulated %s: %s='%s' %s; %s\n", who, var, value, what, consequence);
    return false;
  }
};

std::optional<uint64_t> parse_count(std::string_view text, size_t max_digits) {
  if (text.empty() || text.size() > max_digits) return std::nullopt;
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// "pid:command:bytes" or "pid:command:bytes:device".
std::optional<OtherProcess> parse_process(std::string_view entry) {
  std::vector<std::string_view> parts = split(entry, ':');
  if (parts.size() != 3 && parts.size() != 4) return std::nullopt;
  auto pid = parse_count(parts[0], 10);
  auto bytes = parse_size(parts[2]);
  if (!pid || *pid == 0 || *pid > UINT32_MAX || parts[1].empty() || !bytes) return std::nullopt;
  OtherProcess process{static_cast<uint32_t>(*pid), std::string(parts[1]), *bytes, 0};
  if (parts.size() == 4) {
    auto device = parse_count(parts[3], 2);
    if (!device) return std::nullopt;
    process.device = static_cast<int>(*device);
  }
  return process;
}

bool read_others(const char* v, SimConfig* config, const Reporter& error) {
  const char* var = "GPUMEMTRACE_SIM_OTHERS_MEMORY";
  std::vector<std::string_view> entries = split(v, ',');
  bool processes = std::string_view(v).find(':') != std::string_view::npos;
  if (processes) {
    for (std::string_view entry : entries) {
      auto process = parse_process(entry);
      if (!process)
        return error(var, v, "is not a list of pid:command:bytes[:device] (e.g. 4242:python train.py:2GiB)");
      if (process->device >= config->devices) return error(var, v, "names a device that does not exist");
      config->others[static_cast<size_t>(process->device)] += process->bytes;
      config->other_processes.push_back(std::move(*process));
    }
  } else {
    std::vector<uint64_t> sizes;
    for (std::string_view entry : entries) {
      auto bytes = parse_size(entry);
      if (!bytes)
        return error(var, v,
                     "is not a size, a comma-separated list of sizes (e.g. 1GiB or 0,512MiB) or of "
                     "pid:command:bytes");
      sizes.push_back(*bytes);
    }
    if (sizes.size() == 1) sizes.assign(static_cast<size_t>(config->devices), sizes[0]);
    if (static_cast<int>(sizes.size()) != config->devices) return error(var, v, "does not list one size per device");
    config->others = sizes;
  }
  for (uint64_t s : config->others)
    if (s > config->capacity) return error(var, v, "exceeds the device memory (GPUMEMTRACE_SIM_MEMORY)");
  return true;
}

}  // namespace

bool read_sim_config(SimConfig* config, const char* who, const char* consequence) {
  Reporter error{who, consequence};
  if (const char* v = std::getenv("GPUMEMTRACE_SIM_DEVICES"); v && *v) {
    auto n = parse_count(v, 4);
    if (!n || *n > kMaxSimDevices) return error("GPUMEMTRACE_SIM_DEVICES", v, "is not a device count from 0 to 16");
    config->devices = static_cast<int>(*n);
  }
  if (const char* v = std::getenv("GPUMEMTRACE_SIM_MEMORY"); v && *v) {
    auto bytes = parse_size(v);
    if (!bytes || *bytes < kMinCapacity || *bytes > kMaxCapacity)
      return error("GPUMEMTRACE_SIM_MEMORY", v, "is not a memory size from 2MiB to 1TiB (e.g. 16GiB)");
    config->capacity = *bytes;
  }
  if (const char* v = std::getenv("GPUMEMTRACE_SIM_CONTEXT_MEMORY"); v && *v) {
    auto bytes = parse_size(v);
    if (!bytes || *bytes >= config->capacity)
      return error("GPUMEMTRACE_SIM_CONTEXT_MEMORY", v, "is not a memory size below the device memory (e.g. 300MiB)");
    config->context_bytes = *bytes;
  }
  config->others.assign(static_cast<size_t>(config->devices), 0);
  if (const char* v = std::getenv("GPUMEMTRACE_SIM_OTHERS_MEMORY"); v && *v) return read_others(v, config, error);
  return true;
}

std::array<unsigned char, 16> sim_device_uuid(int ordinal) {
  std::array<unsigned char, 16> uuid{};
  uint64_t h = 0xcbf29ce484222325ull ^ static_cast<uint64_t>(ordinal + 1);
  for (int i = 0; i < 16; i++) {
    h = (h ^ static_cast<uint64_t>(i * 0x9e37 + ordinal)) * 0x100000001b3ull;
    uuid[static_cast<size_t>(i)] = static_cast<unsigned char>(h >> 29);
  }
  uuid[6] = static_cast<unsigned char>((uuid[6] & 0x0f) | 0x40);
  uuid[8] = static_cast<unsigned char>((uuid[8] & 0x3f) | 0x80);
  return uuid;
}

std::string sim_pci_bus_id(int ordinal) {
  char text[32];
  std::snprintf(text, sizeof text, "00000000:%02X:00.0", static_cast<unsigned>(ordinal + 1));
  return text;
}

std::string sim_state_dir() {
  const char* v = std::getenv("GPUMEMTRACE_SIM_STATE_DIR");
  return v ? std::string(v) : std::string();
}

std::string sim_state_file(const std::string& dir, long pid) {
  return dir + "/" + kSimStatePrefix + std::to_string(pid);
}

}  // namespace gpumemtrace::sim
