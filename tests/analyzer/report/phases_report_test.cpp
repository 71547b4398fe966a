// `gpumemtrace phases` (analyzer/replay/phase_instances.h, analyzer/report/phases_model.h) on a hand-built
// trace: two instances of "step", the first with a nested "forward" that leaves one allocation live.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analyzer/report/phases_model.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using Json = nlohmann::json;

// Times in µs (each event 1 µs after the one before); sizes in bytes; stack 1 [0xa000], stack 2 [0xb000].
//   1 push step          (#1)
//   2 alloc 0x1000 1000  stack 1
//   3 push forward
//   4 alloc 0x2000 500   stack 2   the peak of both: 1500
//   5 free 0x2000
//   6 alloc 0x3000 300   stack 2
//   7 pop forward        left live: 300; live 1300
//   8 free 0x1000
//   9 pop step           left live: 300 (forward's); live 300
//  10 push step          (#2)
//  11 alloc 0x4000 200   stack 1
//  12 pop step           left live 200; live 500: growth +200
TraceBuilder phases_trace() {
  TraceBuilder b;
  b.thread_new(1, 1, "main").stack_node(0, 0xA000).stack_node(0, 0xB000);
  b.record(trace::PhaseName{0, 0, "step"}).record(trace::PhaseName{1, 0, "forward"});
  b.event(trace::PhasePush{{}, 0}, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x1000, 1000, 1, 1000);
  b.event(trace::PhasePush{{}, 1}, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x2000, 500, 2, 1000);
  b.free(Api::cudaFree, 0x2000, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x3000, 300, 2, 1000);
  b.event(trace::PhasePop{{}, 0}, 1000);
  b.free(Api::cudaFree, 0x1000, 1000);
  b.event(trace::PhasePop{{}, 0}, 1000);
  b.event(trace::PhasePush{{}, 0}, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x4000, 200, 1, 1000);
  b.event(trace::PhasePop{{}, 0}, 1000);
  b.end(15, 1000);
  return b;
}

class PhasesReport : public testing::Test {
 protected:
  void SetUp() override { path_ = write_file(scratch_ / "phases.trace", phases_trace().bytes()); }
  ProcessResult run(const std::vector<std::string>& args) {
    std::vector<std::string> command = {"phases"};
    command.insert(command.end(), args.begin(), args.end());
    command.push_back(path_);
    return run_gpumemtrace(command);
  }
  ScratchDir scratch_;
  std::string path_;
};

TEST_F(PhasesReport, EachInstanceHasItsPeakWhatItLeftLiveAndItsGrowth) {
  ProcessResult r = run({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json phases = Json::parse(r.out)["phases"];
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0]["phase"], "step");
  EXPECT_EQ(phases[1]["phase"], "step/forward");

  const Json& step1 = phases[0]["instances"].at(0);
  EXPECT_EQ(step1["number"], 1);
  EXPECT_EQ(step1["thread"], 1);
  EXPECT_EQ(step1["start_ns"], 1000);
  EXPECT_EQ(step1["end_ns"], 9000);
  EXPECT_EQ(step1["peak_bytes"], 1500);
  EXPECT_EQ(step1["peak_time_ns"], 4000);
  EXPECT_EQ(step1["allocated_bytes"], 1800);
  EXPECT_EQ(step1["allocations"], 3);
  EXPECT_EQ(step1["left_live_bytes"], 300);
  EXPECT_EQ(step1["left_live_allocations"], 1);
  EXPECT_EQ(step1["live_at_end_bytes"], 300);
  EXPECT_TRUE(step1["growth_bytes"].is_null());
  ASSERT_EQ(step1["left_live"].size(), 1u);
  EXPECT_EQ(step1["left_live"][0]["stack"][0]["function"], "0xb000");

  const Json& step2 = phases[0]["instances"].at(1);
  EXPECT_EQ(step2["number"], 2);
  EXPECT_EQ(step2["peak_bytes"], 500);
  EXPECT_EQ(step2["allocated_bytes"], 200);
  EXPECT_EQ(step2["left_live_bytes"], 200);
  EXPECT_EQ(step2["live_at_end_bytes"], 500);
  EXPECT_EQ(step2["growth_bytes"], 200);
  EXPECT_EQ(step2["left_live"][0]["stack"][0]["function"], "0xa000");

  const Json& forward = phases[1]["instances"].at(0);
  EXPECT_EQ(forward["live_at_start_bytes"], 1000);
  EXPECT_EQ(forward["peak_bytes"], 1500);
  EXPECT_EQ(forward["allocated_bytes"], 800);
  EXPECT_EQ(forward["left_live_bytes"], 300);
  EXPECT_EQ(forward["live_at_end_bytes"], 1300);
  EXPECT_EQ(forward["ended"], true);
}

// The declaration of an instance's figures is what the JSON carries: by name, in order, then its sites.
TEST_F(PhasesReport, EachInstanceCarriesTheDeclaredFiguresInOrder) {
  std::vector<std::string> declared;
#define GPUMEMTRACE_FIGURE_NAME(type, member, initial) declared.push_back(#member);
  GPUMEMTRACE_PHASE_INSTANCE_FIGURES(GPUMEMTRACE_FIGURE_NAME)
#undef GPUMEMTRACE_FIGURE_NAME
  ASSERT_EQ(declared.size(), 14u);
  declared.push_back("left_live");
  ProcessResult r = run({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::ordered_json instance = nlohmann::ordered_json::parse(r.out)["phases"][0]["instances"].at(0);
  std::vector<std::string> keys;
  for (const auto& [key, value] : instance.items()) keys.push_back(key);
  EXPECT_EQ(keys, declared);
}

TEST_F(PhasesReport, TextSaysTheSame) {
  ProcessResult r = run({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  step (2 instances)\n"
                       "    #1 thread 1, 1 µs to 9 µs: peak 1.46 KiB at 4 µs, allocated 1.76 KiB in 3, left live 300 B in 1\n"
                       "      300 B in 1 allocations left live on device 0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    #2 thread 1, 10 µs to 12 µs: peak 500 B at 11 µs, allocated 200 B in 1, left live 200 B in "
                       "1, growth +200 B\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace gpumemtrace::test
