// The tracer as an NVTX tool: a program using NVIDIA's NVTX3 headers, run under libgpumemtrace.so on the
// simulated device; each allocation's phase path, as the replay reconstructs it from the phase records.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/interpose/nvtx/phase_paths.h"
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
