// The whole device at an out-of-memory failure and the GPUs a process touches (issue 27, items 3 and 4), with
// programs/placement_workload.cpp traced on the simulated device and its NVML: every byte of the device accounted
// for (the other processes by pid and name, the context as measured, memory a library made named by it), a
// context on a device the process never allocates on, ranks that share one GPU, and what is not seen without NVML.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/size_units.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

using Json = nlohmann::json;

// 1 GiB devices, each context takes 32 MiB; NVML lists the traced process through the state directory.
EnvChanges device_env(const ScratchDir& state, EnvChanges more = {}) {
  more.emplace("GPUMEMTRACE_SIM_MEMORY", "1GiB");
  more.emplace("GPUMEMTRACE_SIM_CONTEXT_MEMORY", "32MiB");
  more.emplace("GPUMEMTRACE_SIM_STATE_DIR", state.path());
  return more;
}

Json oom_json(const std::string& trace) {
  ProcessResult r = run_gpumemtrace({"oom", "--json", trace});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out);
}

uint64_t sum_of_parts(const Json& b) {
  int64_t sum = static_cast<int64_t>(b["free_bytes"].get<uint64_t>() + b["unlisted_bytes"].get<uint64_t>() +
                                     b["pool_unused_bytes"].get<uint64_t>() + b["context_bytes"].get<uint64_t>() +
                                     b["unlisted_used_bytes"].get<uint64_t>());
  for (const Json& owner : b["owners"]) sum += static_cast<int64_t>(owner["bytes"].get<uint64_t>());
  for (const Json& process : b["other_processes"]) sum += static_cast<int64_t>(process["bytes"].get<uint64_t>());
  return static_cast<uint64_t>(sum + b["unaccounted_bytes"].get<int64_t>());
}

// A line of the text's breakdown: the part in a column of 56, then the size.
std::string row(const std::string& part, const std::string& size) {
  return "    " + part + std::string(56 - part.size(), ' ') + " " + size + "\n";
}

const char* kTwoOthers = "4242:python train.py:256MiB,77:stale worker:512MiB";

// 1024 MiB = 156 free + 64 the program's + 4 cuBLAS's + 32 the context + 512 + 256 the others; 256 asked.
TEST(DeviceAccounting, AnOomBesideTwoProcessesAccountsForEveryByteOfTheDevice) {
  ScratchDir state;
  TracedRun run = run_traced("report_prog_placement", {"others", "256"},
                             device_env(state, {{"GPUMEMTRACE_SIM_OTHERS_MEMORY", kTwoOthers}}));
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  Json oom = oom_json(run.trace).at("ooms").at(0);
  EXPECT_EQ(oom["verdict"], "other-processes");
  EXPECT_NE(oom["finding"].get<std::string>().find(
                "; they are pid 77 (stale worker) 512 MiB, pid 4242 (python train.py) 256 MiB"),
            std::string::npos)
      << oom["finding"];
  EXPECT_EQ(oom["remedy"].get<std::string>().rfind("end the other processes if they are stale (an earlier run, a "
                                                   "zombie worker: `kill 77 4242`;", 0),
            0u)
      << oom["remedy"];

  const Json& b = oom["device_breakdown"];
  EXPECT_EQ(b["total_bytes"], 1024 * kMiB);
  EXPECT_EQ(b["free_bytes"], 156 * kMiB);
  EXPECT_EQ(b["owners"], Json::parse(R"([{"owner": "the program's own", "framework": false, "bytes": 67108864},
                                         {"owner": "cuBLAS", "framework": false, "bytes": 4194304}])"));
  EXPECT_EQ(b["unlisted_bytes"], 0u);
  EXPECT_EQ(b["context_source"], "measured");
  EXPECT_EQ(b["context_bytes"], 32 * kMiB);
  EXPECT_EQ(b["others_known"], true);
  EXPECT_EQ(b["other_processes"], Json::parse(R"([{"pid": 77, "command": "stale worker", "bytes": 536870912},
                                                  {"pid": 4242, "command": "python train.py", "bytes": 268435456}])"));
  EXPECT_EQ(b["unlisted_used_bytes"], 0u);
  EXPECT_EQ(b["unaccounted_bytes"], 0);
  EXPECT_EQ(b["unseen"], Json::array());
  EXPECT_EQ(sum_of_parts(b), 1024 * kMiB);

  ProcessResult text = run_gpumemtrace({"oom", run.trace});
  EXPECT_NE(text.out.find(row("this process: cuBLAS", "4.00 MiB (4194304 B)")),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(row("other process: pid 77 stale worker", "512 MiB (536870912 B)") +
                          row("other process: pid 4242 python train.py", "256 MiB (268435456 B)") +
                          row("unaccounted", "0 B")),
            std::string::npos)
      << text.out;
}

// Without NVML the trace has contexts but no device states: the context's cost and the other processes are not
// seen, and the report says so; their bytes are unaccounted, and the parts still add up to the total.
TEST(DeviceAccounting, WithoutNvmlTheReportSaysWhatItCouldNotSee) {
  ScratchDir state;
  TracedRun run = run_traced("report_prog_placement", {"others", "256"},
                             device_env(state, {{"GPUMEMTRACE_SIM_OTHERS_MEMORY", kTwoOthers},
                                                {"GPUMEMTRACE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}}));
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  Json oom = oom_json(run.trace).at("ooms").at(0);
  EXPECT_EQ(oom["verdict"], "other-processes");
  EXPECT_EQ(oom["remedy"], "find the other processes on the device (nvidia-smi) and end a stale one, or run on another "
                           "device (CUDA_VISIBLE_DEVICES)");
  const Json& b = oom["device_breakdown"];
  EXPECT_EQ(b["context_source"], "unknown");
  EXPECT_EQ(b["others_known"], false);
  EXPECT_EQ(b["other_processes"], Json::array());
  EXPECT_EQ(b["unaccounted_bytes"], static_cast<int64_t>(800 * kMiB));  // 768 of the others + 32 of the context
  EXPECT_EQ(b["unseen"], Json::parse(R"json([
    "other processes: NVML was not available when the trace was made (their memory is in unaccounted)",
    "the CUDA context: its cost was not measured (NVML was not available; it is in unaccounted)"])json"));
  EXPECT_EQ(sum_of_parts(b), 1024 * kMiB);
}

TEST(DeviceAccounting, AContextOnADeviceThatIsNeverAllocatedOnIsTheWrongGpu) {
  ScratchDir state;
  TracedRun run = run_traced("report_prog_placement", {"two-devices"},
                             device_env(state, {{"GPUMEMTRACE_SIM_DEVICES", "2"}, {"LOCAL_RANK", "1"}}));
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  Json placement = oom_json(run.trace).at("device_placement");
  EXPECT_EQ(placement["verdict"], "wrong-gpu");
  EXPECT_EQ(placement["local_rank"], 1);
  ASSERT_EQ(placement["devices"].size(), 2u);
  const Json& first = placement["devices"][0];
  EXPECT_EQ(first["device"], 0);
  EXPECT_EQ(first["contexts"], 1u);
  EXPECT_EQ(first["context_bytes"], 32 * kMiB);
  EXPECT_EQ(first["allocations"], 0u);
  EXPECT_EQ(placement["devices"][1]["allocations"], 1u);
  EXPECT_NE(first["uuid"], placement["devices"][1]["uuid"]);
  EXPECT_EQ(placement["findings"], Json::array({"a context on device 0 " + first["uuid"].get<std::string>() +
                                                " (it took 32.0 MiB) but every allocation is on device 1"}));

  ProcessResult summary = run_gpumemtrace({"summary", run.trace});
  EXPECT_NE(summary.out.find("verdict: wrong-gpu: a context on device 0 "), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("  remedy: give each process one GPU before its first CUDA call: "
                             "torch.cuda.set_device(local_rank)"),
            std::string::npos)
      << summary.out;
}

// Four ranks run together on four devices, but rank 2 picks device 1: ranks 1 and 2 share that GPU, and rank 2 is
// not on the device its local rank implies.
TEST(DeviceAccounting, RanksThatShareOneGpuAreFlagged) {
  ScratchDir state, barrier, ranks;
  const int devices[] = {0, 1, 1, 3};
  std::vector<TracedRun> runs(4);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 4; ++rank)
    threads.emplace_back([&, rank] {
      runs[static_cast<size_t>(rank)] = run_traced(
          "report_prog_placement", {"rank", std::to_string(devices[rank])},
          device_env(state, {{"GPUMEMTRACE_SIM_DEVICES", "4"},
                             {"RANK", std::to_string(rank)},
                             {"LOCAL_RANK", std::to_string(rank)},
                             {"PLACEMENT_BARRIER", barrier.path() + ":4"}}));
    });
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < 4; ++rank) {
    ASSERT_EQ(runs[static_cast<size_t>(rank)].result.exit_code, 0) << runs[static_cast<size_t>(rank)].result.err;
    std::filesystem::copy_file(runs[static_cast<size_t>(rank)].trace, ranks / ("mem-" + std::to_string(rank) + ".trace"));
  }
  ProcessResult r = run_gpumemtrace({"summary", "--json", ranks.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json json = Json::parse(r.out);
  Json rank1 = oom_json(runs[1].trace).at("device_placement");
  std::string uuid = rank1["devices"][0]["uuid"];
  EXPECT_EQ(json["placement_findings"],
            Json::array({"rank 1 and rank 2 allocate on the same GPU " + uuid + " at the same time: they share its memory",
                         "rank 2: local rank 2 allocates on device 1, not on device 2 that its local rank implies"}));
  EXPECT_NE(json["placement_remedy"].get<std::string>().find("torch.cuda.set_device(local_rank)"), std::string::npos);

  ProcessResult text = run_gpumemtrace({"summary", ranks.path()});
  EXPECT_NE(text.out.find("verdict: wrong-gpu: rank 1 and rank 2 allocate on the same GPU " + uuid), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace gpumemtrace::test
