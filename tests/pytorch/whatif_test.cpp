// gpumemtrace whatif on real PyTorch 2.14.1 runs (the workloads of allocator_replay.py on the simulated device):
// the replay under the recorded settings gives PyTorch's own peak reserved (torch.cuda.max_memory_reserved), and
// the prediction for expandable segments gives the peak of a real run with them.
#include <gtest/gtest.h>

#include <string>

#include "tests/pytorch/torch_run.h"

namespace gpumemtrace::test {
namespace {

const std::string kScript = std::string(GMT_PYTORCH_TESTS) + "/allocator_replay.py";

class Whatif : public testing::Test {
 protected:
  void SetUp() override { REQUIRE_TORCH(); }
};

TEST_F(Whatif, RecordedSettingsGiveThePeakAndExpandableSegmentsThePeakOfARealRun) {
  TorchRun recorded = run_torch(kScript, {"fragmenting_mix"}, "16GiB");
  ASSERT_EQ(recorded.checks["done"], true) << describe(recorded.result);
  TorchRun expandable =
      run_torch(kScript, {"fragmenting_mix"}, "16GiB", {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}});
  ASSERT_EQ(expandable.checks["done"], true) << describe(expandable.result);
  nlohmann::json json = report({"whatif", "--json", "--set", "expandable_segments=True", recorded.trace});
  const nlohmann::json& replay = json["replay_of_recorded"];
  EXPECT_EQ(replay["recorded_segment_events"], 34);
  EXPECT_EQ(replay["matched_segment_events"], 34);
  EXPECT_EQ(replay["first_difference"], nullptr);
  ASSERT_EQ(json["scenarios"].size(), 2u);
  EXPECT_EQ(json["scenarios"][0]["name"], "recorded settings");
  EXPECT_EQ(json["scenarios"][0]["peak_reserved_bytes"], recorded.checks["max_reserved"]);
  EXPECT_EQ(replay["recorded_peak_reserved_bytes"], recorded.checks["max_reserved"]);
  EXPECT_EQ(json["scenarios"][1]["name"], "expandable_segments=True");
  EXPECT_EQ(json["scenarios"][1]["peak_reserved_bytes"], expandable.checks["max_reserved"]);
  EXPECT_EQ(json["scenarios"][1]["out_of_memory"], false);
}

// A device too small for the run: the first request that fails, with its stack from the snapshot.
TEST_F(Whatif, ASmallDeviceRunsOutOfMemoryAtARequestWithItsStack) {
  TorchRun recorded = run_torch(kScript, {"fragmenting_mix"}, "16GiB", {{"ALLOCATOR_REPLAY_STACKS", "1"}});
  nlohmann::json json = report({"whatif", "--json", "--memory", "100MiB", recorded.trace});
  ASSERT_EQ(json["scenarios"].size(), 2u);
  const nlohmann::json& small = json["scenarios"][1];
  EXPECT_EQ(small["name"], "memory=100 MiB");
  ASSERT_EQ(small["out_of_memory"], true);
  EXPECT_GT(small["first_out_of_memory"]["size_bytes"], 0);
  ASSERT_FALSE(small["first_out_of_memory"]["stack"].empty());
  EXPECT_NE(small["first_out_of_memory"]["stack"][0].get<std::string>().find("allocator_replay.py"), std::string::npos);
  EXPECT_EQ(small["fits_in_bytes"], json["scenarios"][0]["fits_in_bytes"]);
}

TEST(WhatifCommandLine, AnUnknownSettingIsRefusedWithExit2) {
  REQUIRE_TORCH();
  TorchRun recorded = run_torch(kScript, {"small_tensors"}, "16GiB");
  ProcessResult r = run_gpumemtrace({"whatif", "--set", "expandable_segmnts=True", recorded.trace});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace whatif: bad setting: unrecognized CachingAllocator option: expandable_segmnts\n");
  r = run_gpumemtrace({"whatif", "--set", "max_split_size_mb=10", recorded.trace});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace whatif: bad setting: max_split_size_mb too small, must be >= 20\n");
}

}  // namespace
}  // namespace gpumemtrace::test
