// Growth's windows follow the instances of a phase when the trace has phases (docs/reports.md, "Growth"):
// on a hand-built trace where equal time slices and the instances of `step` give different answers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using Json = nlohmann::json;

// Ten steps, each event 1 µs after the one before. Between two steps a prefetch buffer of k x 1000 bytes
// (stack [0xa000]) is allocated for step k and freed after it, so it is live for the whole of each step
// and its size grows with k. Every step has a nested `forward`; steps 5 and 10 are followed by an `eval`.
//   step k:  alloc buffer (k x 1000)   push step   push forward   pop   pop   free buffer   [push eval  pop]
// Instances of `step`: the buffer's floors are 1000, 2000, ..., 10000: growth of 9000, rising in 9 of 9.
// Equal time slices: every slice holds a moment between a free and the next step's buffer, when the
// buffer held nothing: its floors are all 0, no growth.
TraceBuilder steps_trace() {
  TraceBuilder b;
  b.thread_new(1, 1, "main").stack_node(0, 0xA000);
  b.record(trace::PhaseName{0, 0, "step"}).record(trace::PhaseName{1, 0, "forward"}).record(trace::PhaseName{2, 0, "eval"});
  for (uint64_t k = 1; k <= 10; ++k) {
    uint64_t address = 0x100000 * k;
    b.alloc(Api::cudaMalloc, 0, address, 1000 * k, 1, 1000);
    b.event(trace::PhasePush{{}, 0}, 1000);
    b.event(trace::PhasePush{{}, 1}, 1000);
    b.event(trace::PhasePop{{}, 0}, 1000);
    b.event(trace::PhasePop{{}, 0}, 1000);
    b.free(Api::cudaFree, address, 1000);
    if (k % 5 == 0) b.event(trace::PhasePush{{}, 2}, 1000).event(trace::PhasePop{{}, 0}, 1000);
  }
  b.end(64, 1000);
  return b;
}

class GrowthWindows : public testing::Test {
 protected:
  void SetUp() override { path_ = write_file(scratch_ / "steps.trace", steps_trace().bytes()); }
  ProcessResult run(std::vector<std::string> args) {
    args.push_back(path_);
    return run_gpumemtrace(args);
  }
  Json growth(std::vector<std::string> args) {
    args.insert(args.begin(), {"growth", "--json"});
    ProcessResult r = run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Json::parse(r.out);
  }
  ScratchDir scratch_;
  std::string path_;
};

TEST_F(GrowthWindows, AreTheInstancesOfTheTopLevelPhaseWithTheMost) {
  Json json = growth({});
  EXPECT_EQ(json["growth_windows"], Json::parse(R"({"phase": "step", "instances": 10, "windows": 10})"));
  ASSERT_EQ(json["growth"].size(), 1u);
  const Json& buffer = json["growth"][0];
  EXPECT_EQ(buffer["bytes"], 9000);
  EXPECT_EQ(buffer["windows"], 9);
  EXPECT_EQ(buffer["floors"], Json::parse("[1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000]"));
  EXPECT_EQ(buffer["stack"][0]["function"], "0xa000");
}

TEST_F(GrowthWindows, TimeSlicesSeeNoGrowthHere) {
  Json json = growth({"--time-slices"});
  EXPECT_EQ(json["growth_windows"]["phase"], nullptr);
  EXPECT_EQ(json["growth_windows"]["windows"], 10);
  EXPECT_EQ(json["growth"].size(), 0u);
}

TEST_F(GrowthWindows, APhaseIsChosenByPathOrName) {
  Json json = growth({"--phase", "forward"});
  EXPECT_EQ(json["growth_windows"]["phase"], "step/forward");
  ASSERT_EQ(json["growth"].size(), 1u);
  EXPECT_EQ(json["growth"][0]["bytes"], 9000);
  EXPECT_EQ(growth({"--phase", "step/forward"})["growth_windows"]["phase"], "step/forward");
}

TEST_F(GrowthWindows, TheTextSaysWhichWindows) {
  ProcessResult text = run({"growth"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("growth: stacks whose live memory kept rising (the 10 instances of phase step, in 10 "
                          "windows):\n  +8.79 KiB on device 0, rose in 9 of 9 windows: "),
            std::string::npos)
      << text.out;
  text = run({"growth", "--time-slices"});
  EXPECT_NE(text.out.find("growth: no stack's live memory kept rising (10 equal time slices from the first "
                          "allocation)\n"),
            std::string::npos)
      << text.out;
}

TEST_F(GrowthWindows, APhaseThatCannotBeTheWindowsIsABadCommandLine) {
  ProcessResult few = run({"growth", "--phase", "eval"});
  EXPECT_EQ(few.exit_code, 1);
  EXPECT_EQ(few.err, "gpumemtrace growth: --phase eval: growth needs at least 3 instances, the trace has 2 (see gpumemtrace growth --help)\n");
  ProcessResult none = run({"growth", "--phase", "backward"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err, "gpumemtrace growth: --phase backward: the trace has no such phase (see gpumemtrace growth --help)\n");
  ProcessResult both = run({"growth", "--phase", "step", "--time-slices"});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_EQ(both.err, "gpumemtrace growth: --phase contradicts --time-slices (see gpumemtrace growth --help)\n");
}

}  // namespace
}  // namespace gpumemtrace::test
