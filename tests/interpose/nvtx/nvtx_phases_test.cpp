// The tracer as an NVTX tool: a program using NVIDIA's NVTX3 headers, run under libgpumemtrace.so on the
// simulated device; each allocation's phase path, as the replay reconstructs it from the phase records.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/interpose/nvtx/phase_paths.h"
#include "tests/support/source_lines.h"
#include "tests/support/subprocess.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

TEST(NvtxPhases, EveryAllocationHasItsThreadsPhasePath) {
  TracedRun run = run_traced("capture_prog_nvtx_phases");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  Phased phased = read_phases(run.trace);
  std::map<uint64_t, std::string> expected = {
      {100, ""},
      {101, "main"},
      {102, "main/setup"},
      {103, "main"},
      {10001, "worker/step"},
      {10002, "worker/step/net::layer"},
      {10003, "worker"},
      {10004, ""},
      {10005, "wide-\xc3\xa9"},
      {20001, "worker/other-step"},
      {20002, "worker/other-step/net::layer"},
      {20003, "worker"},
      {20004, ""},
      {20005, "wide-\xc3\xa9"},
      {104, ""},
  };
  EXPECT_EQ(phased.path_by_size, expected);
  // Pushes and pops: 2 each on main, 4 each on each worker; one start/end range.
  EXPECT_EQ(phased.phase_records, 2 * (2 + 4 + 4) + 2u);
  EXPECT_EQ(phased.unmatched, 0u);
}

// `gpumemtrace phases` on the same trace. Every allocation is kept until the end, so the figures are exact
// whatever the order of the workers within a step: the workers take turns at barriers, and a worker pops
// its phase only after both have allocated in it.
TEST(NvtxPhases, PhasesReportHasEachInstancesPeakAndWhatItLeftLive) {
  TracedRun run = run_traced("capture_prog_nvtx_phases");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ProcessResult r = run_gpumemtrace({"phases", "--json", run.trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  nlohmann::json by_path;  // phase path -> its instances
  for (const nlohmann::json& phase : report["phases"]) by_path[phase["phase"].get<std::string>()] = phase["instances"];
  ASSERT_EQ(by_path.size(), 8u) << by_path.dump().substr(0, 2000);
  auto expect = [&](const std::string& path, size_t instance, uint64_t at_start, uint64_t peak, uint64_t allocated,
                    uint64_t allocations, uint64_t left_live) {
    SCOPED_TRACE(path);
    ASSERT_GT(by_path[path].size(), instance);
    const nlohmann::json& i = by_path[path][instance];
    EXPECT_EQ(i["live_at_start_bytes"], at_start);
    EXPECT_EQ(i["peak_bytes"], peak);
    EXPECT_EQ(i["allocated_bytes"], allocated);
    EXPECT_EQ(i["allocations"], allocations);
    EXPECT_EQ(i["left_live_bytes"], left_live);
    EXPECT_EQ(i["left_live_allocations"], allocations);  // nothing is freed before the end
  };
  // 100 before any phase; the workers' 10001..10005 and 20001..20005 all live at once before they free.
  expect("main", 0, 100, 150436, 306, 3, 306);
  expect("main/setup", 0, 201, 303, 102, 1, 102);
  expect("worker/step", 0, 406, 406 + 10001 + 10002 + 20001 + 20002, 10001 + 10002, 2, 10001 + 10002);
  expect("worker/other-step", 0, 406, 60412, 20001 + 20002, 2, 20001 + 20002);
  expect("worker/step/net::layer", 0, 406 + 10001 + 20001, 60412, 10002, 1, 10002);
  ASSERT_EQ(by_path["worker"].size(), 2u);
  // Which worker pushes "worker" first is the scheduler's choice (before their first barrier): worker 1's
  // instance is the one that allocated less.
  std::sort(by_path["worker"].begin(), by_path["worker"].end(),
            [](const nlohmann::json& a, const nlohmann::json& b) { return a["allocated_bytes"] < b["allocated_bytes"]; });
  expect("worker", 0, 406, 90418, 10001 + 10002 + 10003, 3, 30006);
  expect("worker", 1, 406, 90418, 20001 + 20002 + 20003, 3, 60006);
  ASSERT_EQ(by_path["wide-\xc3\xa9"].size(), 2u);
  EXPECT_EQ(by_path["wide-\xc3\xa9"][0]["peak_bytes"], 150436);

  // What setup left live is the allocation on the line that allocates 102 bytes, in main.
  const nlohmann::json& left = by_path["main/setup"][0]["left_live"];
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0]["bytes"], 102);
  const std::string source = GMT_NVTX_WORKLOAD_SOURCE;
  bool found = false;
  for (const nlohmann::json& frame : left[0]["stack"])
    found |= frame["function"] == "main" && frame["line"] == line_containing(source, "alloc(102)");
  EXPECT_TRUE(found) << left[0]["stack"].dump(1);
}

TEST(NvtxPhases, AnotherToolKeepsTheInjection) {
  TracedRun run = run_traced("capture_prog_nvtx_phases", {}, {{"NVTX_INJECTION64_PATH", "/nonexistent/other-tool.so"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_NE(run.result.err.find("NVTX_INJECTION64_PATH names another NVTX tool"), std::string::npos) << run.result.err;
  Phased phased = read_phases(run.trace);
  EXPECT_EQ(phased.phase_records, 0u);
  EXPECT_EQ(phased.path_by_size.size(), 15u);
}

}  // namespace
}  // namespace gpumemtrace::test
