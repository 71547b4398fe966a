// NVML on the simulated device: `gpumemtrace info` lists the processes GPUMEMTRACE_SIM_OTHERS_MEMORY names, and
// the trace of a program that runs out of memory beside them holds the device's state with both; without NVML
// the tracer runs and `info` says NVML is not available.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common/size_units.h"
#include "tests/support/decode_helpers.h"
#include "tests/support/subprocess.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

using nlohmann::json;

// Pids above Linux's largest pid_max (2^22): never a real process.
constexpr const char* kTwoOtherHolders = "4194401:python train.py:512MiB,4194402:stale worker:256MiB";

struct DeviceStates {
  std::vector<trace::DeviceState> states;
  std::vector<std::vector<trace::DeviceProcess>> processes;  // of each state
  std::string text;                                          // "moment free total | pid bytes command; ..."
  uint64_t pid = 0;                                          // of the traced process
};

DeviceStates device_states(const std::string& path) {
  DeviceStates out;
  std::string bytes = read_file(path);
  Decoded d = decode_all({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  EXPECT_EQ(d.reader->status(), trace::Status::Complete) << d.reader->error();
  for (const trace::Record& record : d.records) {
    if (const auto* p = std::get_if<trace::Process>(&record)) out.pid = p->pid;
    if (const auto* s = std::get_if<trace::DeviceState>(&record)) {
      out.states.push_back(*s);
      out.processes.emplace_back();
      out.text += fmt::format("{} {} {} {} |", format::kDeviceStateMomentNames[s->moment], s->index,
                              s->device_free / kMiB, s->device_total / kMiB);
    }
    if (const auto* p = std::get_if<trace::DeviceProcess>(&record)) {
      out.processes.back().push_back(*p);
      out.text += fmt::format(" {} {} {};", p->pid == out.pid ? "self" : std::to_string(p->pid), p->bytes / kMiB,
                              p->pid == out.pid ? "" : std::string(p->command));
    }
  }
  for (const trace::DeviceState& s : out.states) EXPECT_FALSE(s.uuid.empty());
  return out;
}

EnvChanges oom_env(EnvChanges extra = {}) {
  extra.emplace("GPUMEMTRACE_SIM_MEMORY", "1GiB");
  extra.emplace("GPUMEMTRACE_SIM_OTHERS_MEMORY", kTwoOtherHolders);
  return extra;
}

TEST(InfoCommand, JsonListsExactlyTheSimulatedProcesses) {
  ProcessResult r = run_gpumemtrace({"info", "--json", "--sim"}, oom_env({{"GPUMEMTRACE_SIM_STATE_DIR", std::nullopt}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  EXPECT_EQ(info["nvml"]["available"], true);
  EXPECT_EQ(info["cuda_driver_version"], 13000);
  EXPECT_EQ(info["runtime"]["version"], 13000);
  ASSERT_EQ(info["devices"].size(), 1u);
  const json& device = info["devices"][0];
  EXPECT_EQ(device["name"], "gpumemtrace simulated device");
  EXPECT_EQ(device["pci_bus_id"], "00000000:01:00.0");
  EXPECT_EQ(device["total"], 1024 * kMiB);
  EXPECT_EQ(device["free"], 256 * kMiB);
  ASSERT_EQ(device["processes"].size(), 2u);
  const json expected[] = {{4194401, 512 * kMiB, "python train.py"}, {4194402, 256 * kMiB, "stale worker"}};
  for (size_t i = 0; i < 2; i++) {
    const json& p = device["processes"][i];
    EXPECT_EQ(p["pid"], expected[i][0]);
    EXPECT_EQ(p["bytes"], expected[i][1]);
    EXPECT_EQ(p["command"], expected[i][2]);
    EXPECT_EQ(p["command_line"], expected[i][2]);  // not in this /proc: NVML's name
    EXPECT_EQ(p["visible"], false);
    EXPECT_TRUE(p["idle"].is_null());
    EXPECT_EQ(p["free_command"], "kill " + std::to_string(expected[i][0].get<int>()));
  }
}

TEST(InfoCommand, TextFlagsAnOrphanHoldingMemoryAndNeverKills) {
  // A simulated process of its own whose parent is gone: a shell that starts it in the background and leaves.
  std::string dir = make_temp_dir();
  EnvChanges env = sim_env(oom_env({{"GPUMEMTRACE_SIM_STATE_DIR", dir}}));
  std::string holder = bin_dir() + "/report_prog_oom";
  ProcessResult started = run_process(
      {"/bin/sh", "-c", "GPUMEMTRACE_SIM_OTHERS_MEMORY=0 \"$0\" hold >/dev/null 2>&1 & echo $!", holder}, env);
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string pid = started.out.substr(0, started.out.find('\n'));
  std::string published = dir + "/sim-" + pid;
  for (int i = 0; i < 500 && !(file_exists(published) && read_file(published).find_first_not_of('\0') != std::string::npos);
       i++)
    usleep(10000);
  ProcessResult r = run_gpumemtrace({"info", "--sim"}, env);
  ProcessResult json_run = run_gpumemtrace({"info", "--sim", "--json"}, env);
  kill(std::stoi(pid), SIGKILL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(json_run.out);
  const json& processes = info["devices"][0]["processes"];
  ASSERT_EQ(processes.size(), 3u) << json_run.out;
  if (processes[2]["ppid"] != 1) GTEST_SKIP() << "orphans are adopted by a subreaper here, not by pid 1";
  EXPECT_NE(r.out.find("pid " + pid + "  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[parent gone] [idle]\n      to free it: kill " + pid + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pid 4194401  ?  512 MiB  python train.py [not visible here]\n"), std::string::npos) << r.out;
  EXPECT_EQ(processes[2]["pid"], std::stoi(pid));
  EXPECT_EQ(processes[2]["bytes"], 64 * kMiB);
  EXPECT_EQ(processes[2]["ppid"], 1);
  EXPECT_EQ(processes[2]["parent_gone"], true);
  EXPECT_EQ(processes[2]["idle"], true);
  EXPECT_EQ(processes[2]["command_line"], holder + " hold");
}

TEST(InfoCommand, WithoutNvmlSaysSoAndExitsZero) {
  EnvChanges env{{"GPUMEMTRACE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}};
  ProcessResult r = run_gpumemtrace({"info"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("NVML not available: /nonexistent/libnvidia-ml.so.1 not found. ")) << r.out;
  ProcessResult j = run_gpumemtrace({"info", "--json"}, env);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json info = json::parse(j.out);
  EXPECT_EQ(info["nvml"]["available"], false);
  EXPECT_EQ(info["nvml"]["unavailable"], "/nonexistent/libnvidia-ml.so.1 not found");
  EXPECT_EQ(info["devices"].size(), 0u);
}

TEST(DeviceStateRecords, OutOfMemoryBesideTwoOthersNamesBoth) {
  TracedRun run = run_traced("report_prog_oom", {"others"}, oom_env({{"GPUMEMTRACE_SIM_STATE_DIR", std::nullopt}}));
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  DeviceStates s = device_states(run.trace);
  // At the first allocation, at the failure (64 MiB held, 256 MiB asked) and at the end; the traced process
  // publishes nothing without GPUMEMTRACE_SIM_STATE_DIR, so NVML's free memory is the others' remainder.
  const std::string others = " 4194401 512 python train.py; 4194402 256 stale worker;";
  EXPECT_EQ(s.text, "start 0 256 1024 |" + others + "oom 0 256 1024 |" + others + "end 0 256 1024 |" + others);
}

TEST(DeviceStateRecords, TheTracedProcessAppearsThroughTheStateDirectory) {
  std::string dir = make_temp_dir();
  TracedRun run = run_traced("report_prog_oom", {"others"}, oom_env({{"GPUMEMTRACE_SIM_STATE_DIR", dir}}));
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  DeviceStates s = device_states(run.trace);
  const std::string others = " 4194401 512 python train.py; 4194402 256 stale worker;";
  EXPECT_EQ(s.text, "start 0 256 1024 |" + others + "oom 0 192 1024 |" + others + " self 64 ;end 0 192 1024 |" + others +
                        " self 64 ;");
}

TEST(DeviceStateRecords, WithoutNvmlTheTracerRunsAndRecordsNone) {
  TracedRun run = run_traced("report_prog_oom", {"others"},
                             oom_env({{"GPUMEMTRACE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}}));
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  DeviceStates s = device_states(run.trace);
  EXPECT_EQ(s.text, "");
  ProcessResult oom = run_gpumemtrace({"oom", run.trace});
  EXPECT_EQ(oom.exit_code, 0) << oom.err;
}

}  // namespace
}  // namespace gpumemtrace::test
