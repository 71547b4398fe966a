// The training-loop example (examples/train_loop.cpp, examples/caching_allocator.cpp) under the tracer on the
// simulated device: its NVTX phases, its caching allocator's heaps and named blocks (the NVTX memory
// extension), and with --fragment an out-of-memory failure whose verdict is fragmentation.
//
// Sizes in MiB. Parameters are 4 per layer and the optimizer state 8 per layer (plain cudaMalloc, the
// optimizer state in step 1's `optimizer` phase); `forward` keeps a 64 KiB loss per step (cudaMalloc). The
// cache's blocks: activations of batch x tokens x 4 KiB per layer (2 at batch 32 and 16 tokens), a 4 MiB
// weight gradient and a 4 KiB bias gradient per layer in `backward`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "analyzer/analysis/analysis.h"
#include "common/size_units.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

constexpr uint64_t kLoss = 64 * 1024;

nlohmann::json report_of(const std::string& name, const std::string& trace) {
  ProcessResult r = run_gpumemtrace({name, "--json", trace});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

const nlohmann::json& phase(const nlohmann::json& phases, const std::string& path) {
  for (const nlohmann::json& p : phases["phases"])
    if (p["phase"] == path) return p;
  ADD_FAILURE() << "no phase " << path;
  static const nlohmann::json none = nlohmann::json::object();
  return none;
}

// Whether the innermost user frame of a left-live site is `function`.
bool stack_has(const nlohmann::json& site, const std::string& function) {
  for (const nlohmann::json& frame : site["stack"])
    if (frame.value("function", "").find(function) != std::string::npos) return true;
  return false;
}

// The default run: 20 steps, batch 32, 8 layers, validation (batch 64) every 5 steps. The cache:
//   step 1 forward    a 20 MiB segment (heap 1): 8 activations of 2 in [0, 16); backward's weight gradients
//                     take the 4 MiB left, then the space each freed activation leaves;
//   step 1 backward   a 2 MiB segment (heap 2) for the bias gradients, one at a time;
//   step 5 validation 8 activations of 4: 5 fill heap 1, 3 a new 20 MiB segment (heap 3).
// From then on every request fits the cache: 42 MiB reserved.
class TrainLoop : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = new TracedRun(run_traced("train_loop"));
    ASSERT_EQ(run_->result.exit_code, 0) << run_->result.err;
  }
  static void TearDownTestSuite() { delete run_; }
  static TracedRun* run_;
};
TracedRun* TrainLoop::run_ = nullptr;

TEST_F(TrainLoop, PrintsWhatTheCacheHolds) {
  EXPECT_NE(run_->result.out.find("train_loop: 20 steps, batch 32, 8 layers; "), std::string::npos) << run_->result.out;
  EXPECT_NE(run_->result.out.find("; the cache holds 42.0 MiB\n"), std::string::npos) << run_->result.out;
}

TEST_F(TrainLoop, PhasesSayWhatEachPhaseLeftLive) {
  nlohmann::json phases = report_of("phases", run_->trace);
  // forward #1 got the first 20 MiB segment and kept a loss; every later one keeps only its loss.
  const nlohmann::json& forward = phase(phases, "forward")["instances"];
  ASSERT_EQ(forward.size(), 20u);
  EXPECT_EQ(forward[0]["left_live_bytes"], 20 * kMiB + kLoss);
  EXPECT_EQ(forward[0]["left_live_allocations"], 2);
  EXPECT_EQ(forward[1]["left_live_bytes"], kLoss);
  EXPECT_EQ(forward[1]["left_live_allocations"], 1);
  // Growth from the end of one forward to the next: step 1's backward and optimizer come between #1 and #2.
  EXPECT_EQ(forward[1]["growth_bytes"], 2 * kMiB + 64 * kMiB + kLoss);
  EXPECT_EQ(forward[2]["growth_bytes"], kLoss);
  ASSERT_EQ(forward[1]["left_live"].size(), 1u);
  EXPECT_TRUE(stack_has(forward[1]["left_live"][0], "accumulate_loss")) << forward[1]["left_live"][0].dump();
  // backward #1: the small segment; optimizer #1: the optimizer state, 16 x 4 MiB.
  EXPECT_EQ(phase(phases, "backward")["instances"][0]["left_live_bytes"], 2 * kMiB);
  const nlohmann::json& optimizer = phase(phases, "optimizer")["instances"];
  EXPECT_EQ(optimizer[0]["left_live_bytes"], 64 * kMiB);
  EXPECT_EQ(optimizer[0]["left_live_allocations"], 16);
  EXPECT_EQ(optimizer[1]["left_live_bytes"], 0);
  // validation #1 (step 5) peaks with the new segment: parameters 32 + optimizer 64 + segments 20 + 2 + 20,
  // and 5 losses; validation #2 (step 10) fits the cache.
  const nlohmann::json& validation = phase(phases, "validation")["instances"];
  ASSERT_EQ(validation.size(), 4u);
  EXPECT_EQ(validation[0]["peak_bytes"], 138 * kMiB + 5 * kLoss);
  EXPECT_EQ(validation[0]["left_live_bytes"], 20 * kMiB);
  EXPECT_EQ(validation[1]["left_live_bytes"], 0);
  EXPECT_EQ(validation[1]["peak_bytes"], 138 * kMiB + 10 * kLoss);
}

TEST_F(TrainLoop, TheCacheSegmentsAreNamedHeapsWithTheirPeaks) {
  nlohmann::json heaps = report_of("fragmentation", run_->trace)["devices"].at(0)["heaps"];
  ASSERT_EQ(heaps.size(), 3u);
  EXPECT_EQ(heaps[0]["name"], "large pool");
  EXPECT_EQ(heaps[1]["name"], "small pool");
  EXPECT_EQ(heaps[2]["name"], "large pool");
  for (const nlohmann::json& heap : heaps) EXPECT_EQ(heap["destroyed"], true);  // the cache gave them back
  // Heap 1 is full in step 1's backward: 7 activations, the 8th and the first weight gradient. Heap 3 holds
  // at most 3 of validation's activations: heap 1 is the best fit (lowest address of two free segments).
  EXPECT_EQ(heaps[0]["peak_allocated_bytes"], 20 * kMiB);
  EXPECT_EQ(heaps[1]["peak_allocated_bytes"], 4096);
  EXPECT_EQ(heaps[2]["peak_allocated_bytes"], 12 * kMiB);
}

// The used view (the default: the cache reports heaps) counts the cache's blocks, not its segments. The peak
// is in the last validation (step 20): parameters 32 + optimizer state 64 + validation's 8 activations of 4,
// and 20 losses; as the driver saw it the segments (42) count instead of the blocks, and the peak comes
// with the 20th loss, before that validation. Were a segment counted between its cudaMalloc and its heap,
// validation #1 would reach 96 + 20 in heap 1 + the new 20 MiB segment + 5 losses, above that peak.
TEST_F(TrainLoop, TheUsedViewCountsTheCacheBlocksNotItsSegments) {
  nlohmann::json summary = report_of("summary", run_->trace);
  EXPECT_EQ(summary["view"], "used");
  const nlohmann::json& device = summary["devices"].at(0);
  EXPECT_EQ(device["peak_bytes"], 128 * kMiB + 20 * kLoss);
  EXPECT_EQ(device["reserved"]["peak_bytes"], 138 * kMiB + 20 * kLoss);

  nlohmann::json peak = report_of("peak", run_->trace);
  bool activations = false;
  for (const nlohmann::json& site : peak["peak"]) {
    EXPECT_FALSE(stack_has(site, "new_segment")) << site.dump();
    if (stack_has(site, "cached_alloc") && stack_has(site, "evaluate")) {
      activations = true;
      EXPECT_EQ(site["bytes"], 32 * kMiB);
      EXPECT_EQ(site["allocations"], 8);
    }
  }
  EXPECT_TRUE(activations) << peak["peak"].dump();
}

// Growth's windows are the 20 instances of `forward` (the first entered of the three top-level phases with
// 20), two per window: window k starts with the 2k losses of the steps before.
TEST_F(TrainLoop, GrowthFollowsTheForwardPhaseAndFindsTheLosses) {
  nlohmann::json growth = report_of("growth", run_->trace);
  EXPECT_EQ(growth["view"], "used");
  EXPECT_EQ(growth["growth_windows"], nlohmann::json::parse(R"({"phase": "forward", "instances": 20, "windows": 10})"));
  ASSERT_EQ(growth["growth"].size(), 1u) << growth.dump();
  const nlohmann::json& losses = growth["growth"][0];
  EXPECT_TRUE(stack_has(losses, "accumulate_loss")) << losses.dump();
  EXPECT_EQ(losses["bytes"], 18 * kLoss);
  EXPECT_EQ(losses["windows"], 9);
  std::vector<uint64_t> floors;
  for (uint64_t k = 0; k < 10; ++k) floors.push_back(2 * k * kLoss);
  EXPECT_EQ(losses["floors"], nlohmann::json(floors));
}

// --fragment --layers 2 on a 64 MiB device. Sequence lengths of 16, 24, 32 tokens make activations of 2, 3
// and 4 MiB; each step keeps the last layer's. In the 20 MiB segment (heap 1), after
//   step 1: free [0,2)  kept [2,4)  free [4,20)
//   step 2: free [0,2)  kept [2,4)  free [4,7)  kept [7,10)  free [10,20)
//   step 3: activations [10,14) and [14,18) (kept), free [18,20): the weight gradient (4) fits no free block
//           (2, 3 and 2, and the 2 MiB small segment, heap 2, all free), so the cache asks for a new 20 MiB
//           segment. The device has 64 - 8 parameters - 16 optimizer state - 3 losses - 22 cached =
//           17.8125 MiB free: the request fails; 9 MiB free in the heaps would have held it, but no block.
// The cache then gives back the free small segment and fails again (19.8125 MiB free; 7 MiB in the heap).
class TrainLoopFragmenting : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = new TracedRun(run_traced("train_loop", {"--fragment", "--layers", "2"}, {{"GPUMEMTRACE_SIM_MEMORY", "64MiB"}}));
  }
  static void TearDownTestSuite() { delete run_; }
  static TracedRun* run_;
};
TracedRun* TrainLoopFragmenting::run_ = nullptr;

TEST_F(TrainLoopFragmenting, RunsOutOfMemoryWithTheCacheHalfFree) {
  EXPECT_EQ(run_->result.exit_code, 1);
  EXPECT_EQ(run_->result.err,
            "train_loop: CUDA out of memory (weight gradient): tried to allocate 4.00 MiB; 19.81 MiB free of 64.00 MiB "
            "total [cudaErrorMemoryAllocation]\n"
            "train_loop: the cache holds 20.00 MiB, 13.00 MiB of it in blocks; its largest free block is 3.00 MiB\n");
}

TEST_F(TrainLoopFragmenting, TheHeapsAtTheFailure) {
  analysis::Analysis analysis = analysis::analyze(run_->trace);
  const auto& failures = analysis.replay->failures();
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].requested_bytes, 20 * kMiB);
  const replay::HeapsAtFailure& first = failures[0].heaps;
  EXPECT_EQ(first.heaps, 2u);
  EXPECT_EQ(first.reserved_bytes, 22 * kMiB);
  EXPECT_EQ(first.allocated_bytes, 13 * kMiB);  // kept 2 + 3, step 3's activations 4 + 4
  EXPECT_EQ(first.free_bytes, 9 * kMiB);        // 2 + 3 + 2 in heap 1, the whole of heap 2
  EXPECT_EQ(first.largest_free_bytes, 3 * kMiB);
  const replay::HeapsAtFailure& second = failures[1].heaps;
  EXPECT_EQ(second.heaps, 1u);
  EXPECT_EQ(second.reserved_bytes, 20 * kMiB);
  EXPECT_EQ(second.free_bytes, 7 * kMiB);

  // The blocks are named after what they hold (nvtxMemRegionsName).
  const replay::Heap& heap = analysis.replay->heaps().heaps().at(0);
  ASSERT_NE(analysis.replay->heaps().block(heap.id, heap.base + 2 * kMiB), nullptr);
  EXPECT_EQ(analysis.replay->heaps().block(heap.id, heap.base + 2 * kMiB)->name, "activations");
  EXPECT_EQ(analysis.replay->heaps().block(heap.id, heap.base + 2 * kMiB)->size, 2 * kMiB);
  EXPECT_EQ(analysis.replay->heaps().block(heap.id, heap.base + 10 * kMiB)->name, "activations");
}

// What the cache held at exit: in the used view its blocks (the 2 and 3 MiB activations kept by steps 1 and
// 2, step 3's 4 and 4 in flight), by the stack that asked for them; as the driver saw it, its segment.
TEST_F(TrainLoopFragmenting, TheUsedViewsLeaksAreTheBlocksNotTheSegments) {
  nlohmann::json leaks = report_of("leaks", run_->trace);
  EXPECT_EQ(leaks["view"], "used");
  bool blocks = false;
  for (const nlohmann::json& site : leaks["leaks"]) {
    EXPECT_FALSE(stack_has(site, "new_segment")) << site.dump();
    if (stack_has(site, "cached_alloc")) {
      blocks = true;
      EXPECT_TRUE(stack_has(site, "forward")) << site.dump();
      EXPECT_EQ(site["bytes"], 13 * kMiB);
      EXPECT_EQ(site["allocations"], 4);
    }
  }
  EXPECT_TRUE(blocks) << leaks.dump();

  ProcessResult r = run_gpumemtrace({"leaks", "--json", "--view", "reserved", run_->trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json reserved = nlohmann::json::parse(r.out);
  EXPECT_EQ(reserved["view"], "reserved");
  const nlohmann::json& segment = reserved["leaks"].at(0);
  EXPECT_TRUE(stack_has(segment, "new_segment")) << segment.dump();
  EXPECT_EQ(segment["bytes"], 20 * kMiB);
}

TEST_F(TrainLoopFragmenting, TheVerdictIsFragmentation) {
  nlohmann::json oom = report_of("oom", run_->trace)["ooms"].at(0);
  EXPECT_EQ(oom["requested_bytes"], 20 * kMiB);
  EXPECT_EQ(oom["verdict"], "fragmentation") << oom["finding"];
  nlohmann::json fit = report_of("fragmentation", run_->trace)["devices"].at(0)["failures"].at(0);
  EXPECT_EQ(fit["heap_free_bytes"], 9 * kMiB);
  EXPECT_EQ(fit["largest_free_block_bytes"], 3 * kMiB);
  EXPECT_EQ(fit["fits_largest_free_block"], false);
}

}  // namespace
}  // namespace gpumemtrace::test
