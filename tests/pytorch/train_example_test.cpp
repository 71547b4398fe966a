// examples/pytorch/train.py under the tracer on a 1 GiB simulated device, as the demo runs it: each flag's bug as
// the reports show it, against the clean run. Five torch processes in all.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/pytorch/torch_run.h"

namespace gpumemtrace::test {
namespace {

const std::string kTrain = GMT_TRAIN_EXAMPLE;
// One activation of the default batch: 32 samples x 128 positions x 1024 features, float32.
constexpr uint64_t kActivation = 32 * 128 * 1024 * 4;

// The number of the line of train.py that contains `text` (0 if none).
int line_of(const std::string& text) {
  std::ifstream file(kTrain);
  int number = 0;
  for (std::string line; std::getline(file, line);) {
    ++number;
    if (line.find(text) != std::string::npos) return number;
  }
  return 0;
}

class TrainExample : public testing::Test {
 protected:
  void SetUp() override { REQUIRE_TORCH(); }

  // `train.py FLAGS` under the tracer, run once (ctest runs each test in a process of its own: a test runs only
  // the flags it checks).
  static const TorchRun& run(const std::string& flags) {
    static std::map<std::string, TorchRun> runs;
    auto it = runs.find(flags);
    if (it != runs.end()) return it->second;
    std::vector<std::string> args;
    for (size_t at = 0; at < flags.size();) {
      size_t end = std::min(flags.find(' ', at), flags.size());
      args.push_back(flags.substr(at, end - at));
      at = end + 1;
    }
    // The tool's Python module on the path: each step is an instance of the phase "train".
    return runs.emplace(flags, run_torch(kTrain, args, "1GiB", {{"PYTHONPATH", GMT_PYTHON_MODULE_DIR}}))
        .first->second;
  }

  // The validation phase's one instance in `phases --json`.
  static nlohmann::json validation(const TorchRun& r) {
    const nlohmann::json phases = report({"phases", "--json", r.trace});
    for (const nlohmann::json& phase : phases["phases"])
      if (phase["phase"] == "validation") return phase["instances"].at(0);
    ADD_FAILURE() << "no validation phase in " << r.trace;
    return nlohmann::json::object();
  }
};

// total_loss += loss keeps each step's graph, and with it the activation that Swish keeps on its ctx: growth names
// the line that allocated it (Model.forward's) under the training loop's call, 16 MiB a step. The first step ran
// before the hook turned PyTorch's history on, so 11 of the 12 steps have Python stacks.
TEST_F(TrainExample, AccumulateGrowsBySixteenMiBAStepAtTheForwardLine) {
  const TorchRun& accumulate = run("--accumulate");
  ASSERT_EQ(accumulate.result.exit_code, 0) << describe(accumulate.result);
  const int forward = line_of("hidden = Swish.apply(");
  const int call = line_of("outputs = model(inputs)");
  ASSERT_GT(forward, 0);
  ASSERT_GT(call, 0);

  nlohmann::json growth = report({"growth", "--json", accumulate.trace});
  EXPECT_EQ(growth["growth_windows"]["phase"], "train");
  EXPECT_EQ(growth["growth_windows"]["instances"], 12);
  ASSERT_EQ(growth["growth"].size(), 1u) << growth["growth"].dump(1);
  const nlohmann::json& site = growth["growth"][0];
  EXPECT_EQ(site["bytes"], 11 * kActivation);
  const nlohmann::json& floors = site["floors"];
  for (size_t i = 1; i < floors.size(); ++i) {
    uint64_t rise = floors[i].get<uint64_t>() - floors[i - 1].get<uint64_t>();
    EXPECT_TRUE(rise > 0 && rise % kActivation == 0) << floors.dump();
  }
  const nlohmann::json& top = site["stack"].at(0);
  EXPECT_EQ(top["file"], kTrain);
  EXPECT_EQ(top["line"], forward);
  EXPECT_EQ(top["function"], "forward");
  bool called_from_loop = false;
  for (const nlohmann::json& frame : site["stack"])
    called_from_loop |= frame["file"] == kTrain && frame["line"] == call && frame["function"] == "main";
  EXPECT_TRUE(called_from_loop) << site["stack"].dump(1);

  ProcessResult summary = run_gpumemtrace({"summary", accumulate.trace});
  EXPECT_NE(summary.out.find("growth: stacks whose live memory kept rising"), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("rose in 9 of 9 windows, device 0: train.py:" + std::to_string(forward) + " in forward"),
            std::string::npos)
      << summary.out;
}

// Validation without torch.no_grad() keeps each batch's activations for a graph nobody uses: PyTorch reserves two
// more 16 MiB segments in the validation phase, which the clean run serves from the cache it kept from training.
TEST_F(TrainExample, ValidationWithoutNoGradPeaksTwoActivationsHigher) {
  const TorchRun& clean = run("");
  const TorchRun& missing = run("--no-grad-missing");
  ASSERT_EQ(clean.result.exit_code, 0) << describe(clean.result);
  ASSERT_EQ(missing.result.exit_code, 0) << describe(missing.result);
  nlohmann::json with = validation(clean), without = validation(missing);
  ASSERT_TRUE(without.contains("allocated_bytes")) << without.dump(1);
  EXPECT_EQ(with["allocations"], 0);
  EXPECT_EQ(with["peak_bytes"], with["live_at_start_bytes"]);
  EXPECT_EQ(without["live_at_start_bytes"], with["live_at_start_bytes"]);
  EXPECT_EQ(without["allocations"], 2);
  EXPECT_EQ(without["allocated_bytes"], 2 * kActivation);
  EXPECT_EQ(without["peak_bytes"].get<uint64_t>(), with["peak_bytes"].get<uint64_t>() + 2 * kActivation);
}

// A length curriculum (8 positions longer every step, 1 MiB more per activation) with a quarter of each step's
// output kept: every kept slice pins a segment sized for its step, which no later step fits in. PyTorch frees its
// idle segments and retries six times, then raises its own error with over half of what it reserved free; the last
// failures' verdict is pytorch-cache with expandable segments as the remedy. With them, the same 30 steps fit.
TEST_F(TrainExample, FragmentRunsOutOfMemoryAndExpandableSegmentsFit) {
  const TorchRun& fragment = run("--fragment");
  EXPECT_EQ(fragment.result.exit_code, 1) << describe(fragment.result);
  EXPECT_NE(fragment.result.err.find("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 38.00 MiB."),
            std::string::npos)
      << fragment.result.err;
  nlohmann::json ooms = report({"oom", "--json", fragment.trace})["ooms"];
  ASSERT_EQ(ooms.size(), 8u) << ooms.dump(1);
  for (size_t i = 0; i < ooms.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(ooms[i]["verdict"], "pytorch-cache");
    // The first six found idle segments, which PyTorch then freed itself before trying again.
    EXPECT_EQ(ooms[i]["cache_remedy"], i < 6 ? "empty-cache" : "expandable-segments");
  }
  const nlohmann::json& last = ooms.back();
  EXPECT_EQ(last["requested_bytes"], 38 * kMiB);
  EXPECT_EQ(last["heaps"]["heaps"], 22);
  EXPECT_EQ(last["heaps"]["reserved_bytes"], 1004 * kMiB);
  EXPECT_EQ(last["heaps"]["largest_free_block_bytes"], 36 * kMiB);
  EXPECT_EQ(last["heaps"]["idle_bytes"], 0);
  EXPECT_GT(last["heaps"]["free_bytes"].get<uint64_t>(), 500 * kMiB);
  ProcessResult text = run_gpumemtrace({"oom", fragment.trace});
  EXPECT_NE(text.out.find("remedy: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (it was off in this run)"),
            std::string::npos)
      << text.out;
  // The failed calls start above PyTorch's caching allocator, and the backward thread's stacks end at its
  // function: the allocator's frames and the thread start-up are behind --all-frames.
  EXPECT_NE(text.out.find("  failed call, innermost first:\n      at::native::gpu_reduce_kernel<…> (libtorch_cuda.so+0x"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("CachingAllocator"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("start_thread"), std::string::npos) << text.out;
  ProcessResult all_frames = run_gpumemtrace({"oom", "--all-frames", fragment.trace});
  EXPECT_NE(all_frames.out.find("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::alloc_block "
                                "(libc10_cuda.so+0x"),
            std::string::npos)
      << all_frames.out;
  EXPECT_NE(all_frames.out.find("start_thread (pthread_create.c:"), std::string::npos) << all_frames.out;

  const TorchRun& expandable = run("--fragment --expandable");
  ASSERT_EQ(expandable.result.exit_code, 0) << describe(expandable.result);
  EXPECT_NE(expandable.result.out.find("trained 30 steps"), std::string::npos) << expandable.result.out;
  EXPECT_EQ(report({"oom", "--json", expandable.trace})["ooms"].size(), 0u);
  nlohmann::json joined = report({"summary", "--json", expandable.trace})["trace"]["pytorch_snapshots"];
  EXPECT_EQ(joined["expandable_segments"], true);
  EXPECT_EQ(joined["missing_segments"], 0);
}

}  // namespace
}  // namespace gpumemtrace::test
