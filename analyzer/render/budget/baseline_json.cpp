#include "analyzer/render/budget/baseline_json.h"

#include <nlohmann/json.hpp>

namespace gpumemtrace::render {

namespace {

using nlohmann::ordered_json;

constexpr std::string_view kFormatName = "gpumemtrace-baseline";

// The figures of a device, in the order they are written.
constexpr std::pair<const char*, uint64_t report::DeviceProfile::*> kFigures[] = {
    {"peak_bytes", &report::DeviceProfile::peak_bytes},
    {"final_bytes", &report::DeviceProfile::final_bytes},
    {"leaked_bytes", &report::DeviceProfile::leaked_bytes},
    {"allocations", &report::DeviceProfile::allocations},
    {"frees", &report::DeviceProfile::frees},
    {"failed_allocations", &report::DeviceProfile::failed_allocations},
    {"out_of_memory", &report::DeviceProfile::out_of_memory},
};

const nlohmann::json& member(const nlohmann::json& object, const std::string& where, const char* key) {
  if (!object.is_object() || !object.contains(key))
    throw BaselineError("malformed baseline: " + where + "." + key + " is missing");
  return object.at(key);
}

uint64_t unsigned_member(const nlohmann::json& object, const std::string& where, const char* key) {
  const nlohmann::json& value = member(object, where, key);
  if (!value.is_number_unsigned()) throw BaselineError("malformed baseline: " + where + "." + key + " is not a byte count");
  return value.get<uint64_t>();
}

const nlohmann::json& array_member(const nlohmann::json& object, const std::string& where, const char* key) {
  const nlohmann::json& value = member(object, where, key);
  if (!value.is_array()) throw BaselineError("malformed baseline: " + where + "." + key + " is not an array");
  return value;
}

report::DeviceProfile parse_device(const nlohmann::json& json, const std::string& where) {
  report::DeviceProfile device;
  const nlohmann::json& ordinal = member(json, where, "device");
  if (!ordinal.is_number_integer()) throw BaselineError("malformed baseline: " + where + ".device is not a device number");
  device.device = ordinal.get<int32_t>();
  for (auto [key, field] : kFigures) device.*field = unsigned_member(json, where, key);
  const nlohmann::json& stacks = array_member(json, where, "stacks_at_peak");
  for (size_t i = 0; i < stacks.size(); ++i) {
    std::string at = where + ".stacks_at_peak[" + std::to_string(i) + "]";
    report::StackBytes stack;
    const nlohmann::json& signature = member(stacks[i], at, "stack");
    if (!signature.is_string()) throw BaselineError("malformed baseline: " + at + ".stack is not a string");
    stack.stack = signature.get<std::string>();
    stack.bytes = unsigned_member(stacks[i], at, "bytes");
    stack.allocations = unsigned_member(stacks[i], at, "allocations");
    device.stacks_at_peak.push_back(std::move(stack));
  }
  return device;
}

}  // namespace

void render_baseline(std::span<const report::RunProfile> profiles, fmt::memory_buffer& out) {
  auto line = [&](int indent, std::string_view text, bool last) {
    fmt::format_to(fmt::appender(out), "{:{}}{}{}\n", "", indent, text, last ? "" : ",");
  };
  fmt::format_to(fmt::appender(out), "{{\n");
  line(2, fmt::format("\"format\": \"{}\"", kFormatName), false);
  line(2, fmt::format("\"version\": {}", kBaselineVersion), false);
  line(2, "\"ranks\": [", true);
  for (size_t r = 0; r < profiles.size(); ++r) {
    const report::RunProfile& profile = profiles[r];
    line(4, "{", true);
    line(6, fmt::format("\"rank\": {}", profile.rank ? std::to_string(*profile.rank) : "null"), false);
    line(6, fmt::format("\"complete\": {}", profile.complete), false);
    line(6, "\"devices\": [", true);
    for (size_t d = 0; d < profile.devices.size(); ++d) {
      const report::DeviceProfile& device = profile.devices[d];
      line(8, "{", true);
      line(10, fmt::format("\"device\": {}", device.device), false);
      for (auto [key, field] : kFigures) line(10, fmt::format("\"{}\": {}", key, device.*field), false);
      line(10, "\"stacks_at_peak\": [", true);
      for (size_t s = 0; s < device.stacks_at_peak.size(); ++s) {
        const report::StackBytes& stack = device.stacks_at_peak[s];
        ordered_json entry = {{"bytes", stack.bytes}, {"allocations", stack.allocations}, {"stack", stack.stack}};
        line(12, entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
             s + 1 == device.stacks_at_peak.size());
      }
      line(10, "]", true);
      line(8, "}", d + 1 == profile.devices.size());
    }
    line(6, "]", true);
    line(4, "}", r + 1 == profiles.size());
  }
  line(2, "]", true);
  fmt::format_to(fmt::appender(out), "}}\n");
}

std::vector<report::RunProfile> parse_baseline(std::string_view text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded()) throw BaselineError("not a baseline: not JSON");
  if (!json.is_object() || !json.contains("format") || !json["format"].is_string() ||
      json["format"].get<std::string>() != kFormatName)
    throw BaselineError(fmt::format("not a baseline: no \"format\": \"{}\"", kFormatName));
  const nlohmann::json& version = member(json, "baseline", "version");
  if (!version.is_number_integer()) throw BaselineError("malformed baseline: baseline.version is not a number");
  if (version.get<int64_t>() != kBaselineVersion)
    throw BaselineError(fmt::format("baseline version {} is {} than this build's {}: write it again with gpumemtrace baseline",
                                    version.get<int64_t>(), version.get<int64_t>() < kBaselineVersion ? "older" : "newer",
                                    kBaselineVersion));
  std::vector<report::RunProfile> profiles;
  const nlohmann::json& ranks = array_member(json, "baseline", "ranks");
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::string where = "ranks[" + std::to_string(r) + "]";
    report::RunProfile& profile = profiles.emplace_back();
    const nlohmann::json& rank = member(ranks[r], where, "rank");
    if (!rank.is_null() && !rank.is_number_integer())
      throw BaselineError("malformed baseline: " + where + ".rank is not a number or null");
    if (!rank.is_null()) profile.rank = rank.get<int64_t>();
    const nlohmann::json& complete = member(ranks[r], where, "complete");
    if (!complete.is_boolean()) throw BaselineError("malformed baseline: " + where + ".complete is not true or false");
    profile.complete = complete.get<bool>();
    const nlohmann::json& devices = array_member(ranks[r], where, "devices");
    for (size_t d = 0; d < devices.size(); ++d)
      profile.devices.push_back(parse_device(devices[d], where + ".devices[" + std::to_string(d) + "]"));
  }
  return profiles;
}

}  // namespace gpumemtrace::render
