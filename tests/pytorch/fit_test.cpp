// gpumemtrace fit on real PyTorch 2.14.1 runs (batch_fit.py on the simulated device, issue 25 item 3): runs at
// batch 8, 16 and 32 on a 1 GiB device give the largest batch that fits it through the allocator model's replay,
// and real runs at that batch and the next one up agree: the first runs to the end, the second runs out of memory.
#include <gtest/gtest.h>

#include <string>

#include "tests/pytorch/torch_run.h"

namespace gpumemtrace::test {
namespace {

const std::string kBatchFitScript = std::string(GMT_PYTORCH_TESTS) + "/batch_fit.py";

// The batch recorded as a parameter set by hand (GPUMEMTRACE_PARAMS, what run --param sets).
TorchRun run_at(uint64_t batch) {
  std::string b = std::to_string(batch);
  return run_torch(kBatchFitScript, {b}, "1GiB", {{"GPUMEMTRACE_PARAMS", "batch=" + b}});
}

TEST(Fit, PredictsTheLargestBatchThatFitsAndRealRunsAgree) {
  REQUIRE_TORCH();
  std::vector<TorchRun> runs;
  for (uint64_t batch : {8, 16, 32}) {
    runs.push_back(run_at(batch));
    ASSERT_EQ(runs.back().checks["done"], true) << describe(runs.back().result);
  }
  nlohmann::json json = report({"fit", "--json", runs[0].trace, runs[1].trace, runs[2].trace});
  ASSERT_EQ(json["devices"].size(), 1u);
  const nlohmann::json& device = json["devices"][0];
  EXPECT_EQ(device["memory_bytes"], kGiB);
  EXPECT_EQ(device["memory_from"], "the traced device");
  ASSERT_TRUE(device["allocator"].is_object()) << json.dump(1);
  const nlohmann::json& allocator = device["allocator"];
  EXPECT_EQ(allocator["largest_batch"], json["largest_batch"]);
  ASSERT_TRUE(json["largest_batch"].is_number()) << json.dump(1);
  uint64_t largest = json["largest_batch"];
  // Measured with real runs on the 1 GiB device (a bisection of batch sizes): 200 runs, 201 runs out of memory.
  EXPECT_EQ(largest, 200u) << json.dump(1);

  TorchRun fits = run_at(largest);
  EXPECT_EQ(fits.result.exit_code, 0) << describe(fits.result);
  EXPECT_EQ(fits.checks["done"], true);
  EXPECT_EQ(fits.checks["max_reserved"], allocator["peak_reserved_bytes"]);
  TorchRun fails = run_at(largest + 1);
  EXPECT_NE(fails.result.exit_code, 0) << describe(fails.result);
  EXPECT_NE(fails.result.err.find("torch.OutOfMemoryError: CUDA out of memory"), std::string::npos)
      << describe(fails.result);
}

}  // namespace
}  // namespace gpumemtrace::test
