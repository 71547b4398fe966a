// Real PyTorch 2.14.1 (its CUDA build) on the simulated device, run as users run it: `gpumemtrace run --sim --
// python script.py`. PyTorch's own figures after a scripted sequence (allocator_sequence.py) against the values its
// caching allocator's rules give; its own out-of-memory errors (out_of_memory.py); and our reports against its
// figures, to the byte. Importing torch takes seconds: each test runs few processes.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "tests/pytorch/torch_run.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/traced_run.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::test {
namespace {

const std::string kScripts = GMT_PYTORCH_TESTS;
// The PyTorch program that the hook's tests run with the test double of torch, here with the real one.
const std::string kTorchWorkload = GMT_TORCH_WORKLOAD;

// PyTorch's own torch.cuda._memory_viz on a snapshot pickle: `code` with the snapshot loaded as s.
ProcessResult memory_viz(const std::string& pickle, const std::string& code) {
  std::string why;
  return run_process({torch_python(&why), "-W", "ignore", "-c",
                      "import pickle, sys\nfrom torch.cuda import _memory_viz\ns = pickle.load(open(sys.argv[1], 'rb'))\n" +
                          code,
                      pickle});
}

// ---------------------------------------------------------------------------------------------------------------
// allocator_sequence.py on a 4 GiB device, under the tracer.

class AllocatorSequence : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string why;
    if (!torch_python(&why).empty()) run_ = new TorchRun(run_torch(kScripts + "/allocator_sequence.py", {}, "4GiB"));
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override {
    REQUIRE_TORCH();
    ASSERT_EQ(run_->result.exit_code, 0) << describe(run_->result);
  }
  static const TorchRun& run() { return *run_; }

 private:
  static inline TorchRun* run_ = nullptr;
};

struct Figures {
  const char* step;
  uint64_t allocated;  // torch.cuda.memory_allocated()
  uint64_t reserved;   // torch.cuda.memory_reserved()
};

// What PyTorch's caching allocator's rules give for each step: sizes round up to 512 bytes; up to 1 MiB is the
// small pool (2 MiB segments), above it the large pool (20 MiB segments below 10 MiB, else the size rounded up to
// 2 MiB); a block serves only its own stream; a large-pool block is split only when more than 1 MiB remains, so a
// 25 MiB tensor holds its whole 26 MiB segment; empty_cache returns the segments without a live block.
constexpr uint64_t kA = 4096;  // torch.empty(1000) floats: 4000 bytes rounded up
const Figures kSteps[] = {
    {"start", 0, 0},
    {"small", kA, 2 * kMiB},
    {"large", kA + 3 * kMiB, 22 * kMiB},
    {"side_stream", kA + 7 * kMiB, 42 * kMiB},  // the other stream's 4 MiB cannot use the default stream's segment
    {"record_stream_free", kA + 4 * kMiB, 42 * kMiB},  // allocated drops at the free; the block waits for the event
    {"reuse", kA + 16 * kMiB, 42 * kMiB},              // 12 MiB split from the 20 MiB segment, whole again
    {"unsplit_remainder", kA + 42 * kMiB, 68 * kMiB},  // 25 MiB asked, the 26 MiB block counted
    {"cached", kA + 16 * kMiB, 68 * kMiB},
    {"empty_cache", kA + 16 * kMiB, 42 * kMiB},
    {"copies", kA + 16 * kMiB, 42 * kMiB},
    {"elementwise", kA + 16 * kMiB + 4096 + 4096 + 512, 42 * kMiB},  // x, x * 2 + 1, the sum's scalar
    {"model", kA + 17 * kMiB, 42 * kMiB},                             // the 1 MiB weight fits the small segment
    // The forward's 1 MiB intermediates take two more small segments; the gradient and the loss stay.
    {"backward", kA + 18 * kMiB + 512, 46 * kMiB},
    {"adam_step", kA + 20 * kMiB + 512, 46 * kMiB},  // exp_avg and exp_avg_sq
    {"zero_grad", kA + 19 * kMiB, 46 * kMiB},
    {"sgd_without_grad", kA + 19 * kMiB, 46 * kMiB},
    {"end", 0, 0},
};
constexpr uint64_t kMaxReserved = 68 * kMiB;

// ctest runs each test in a process of its own, so the sequence's checks are two tests, not one per figure.
// PyTorch's figures follow the rules; torch.cuda.mem_get_info() is the simulated device's cudaMemGetInfo (4 GiB, less
// what PyTorch reserved); what runs without device code works: the device, copies both ways (pinned too), events,
// the statistics.
TEST_F(AllocatorSequence, PytorchFiguresFollowTheCachingAllocatorsRules) {
  uint64_t max_reserved = 0;
  for (const Figures& f : kSteps) {
    SCOPED_TRACE(f.step);
    ASSERT_TRUE(run().steps.contains(f.step)) << run().result.out;
    const nlohmann::json& step = run().steps.at(f.step);
    EXPECT_EQ(step["allocated"], f.allocated);
    EXPECT_EQ(step["reserved"], f.reserved);
    max_reserved = std::max(max_reserved, f.reserved);
    EXPECT_EQ(step["max_reserved"], max_reserved);
    EXPECT_EQ(step["total"], 4 * kGiB);
    EXPECT_EQ(step["free"], 4 * kGiB - f.reserved);
  }
  EXPECT_EQ(max_reserved, kMaxReserved);

  const auto& checks = run().checks;
  EXPECT_EQ(checks.at("is_available"), true);
  EXPECT_EQ(checks.at("device_count"), 1);
  EXPECT_EQ(checks.at("device_name"), "gpumemtrace simulated device");
  EXPECT_EQ(checks.at("event_query"), true);
  EXPECT_EQ(checks.at("round_trip"), true);
  EXPECT_EQ(checks.at("pinned_round_trip"), true);
  EXPECT_EQ(checks.at("num_alloc_retries"), 0);
  EXPECT_EQ(checks.at("segment_count"), 5);  // 2 MiB x3, the 20 MiB of each stream
  EXPECT_EQ(checks.at("summary_has_title"), true);
}

// PYTORCH_CUDA_ALLOC_CONF at work: roundup_power2_divisions:4 rounds 5 MiB + 1 byte up to the next quarter of its
// power of two (6 MiB) and 25 MiB to 28 MiB; with max_split_size_mb:20 the cached 28 MiB block is too large for a
// 12 MiB request, which gets a 12 MiB segment of its own. The reserved view ends where memory_reserved does.
TEST(AllocatorSettings, RoundingAndSplittingFollowTheRules) {
  REQUIRE_TORCH();
  const struct {
    const char* conf;
    uint64_t odd_size;        // allocated after torch.empty(5 MiB + 1)
    uint64_t after_oversize;  // reserved after 25 MiB freed and 12 MiB asked for
  } cases[] = {{"", 5 * kMiB + 512, 26 * kMiB}, {"roundup_power2_divisions:4,max_split_size_mb:20", 6 * kMiB, 40 * kMiB}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.conf);
    TorchRun run = run_torch(kScripts + "/alloc_conf.py", {}, "1GiB", {{"PYTORCH_CUDA_ALLOC_CONF", c.conf}});
    ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
    ASSERT_TRUE(run.steps.contains("after_oversize")) << run.result.out;
    EXPECT_EQ(run.steps.at("odd_size")["allocated"], c.odd_size);
    EXPECT_EQ(run.steps.at("odd_size")["reserved"], 20 * kMiB);
    EXPECT_EQ(run.steps.at("after_oversize")["allocated"], 12 * kMiB);
    EXPECT_EQ(run.steps.at("after_oversize")["reserved"], c.after_oversize);
    nlohmann::json summary = report({"summary", "--json", run.trace});
    EXPECT_EQ(summary["devices"].at(0)["reserved"]["final_bytes"], c.after_oversize);

    // PyTorch's own torch.cuda._memory_viz reads our memory-viz export with the same totals.
    std::string exported = run.dir + "/memory-viz.pickle";
    ProcessResult e = run_gpumemtrace({"export", "--format", "memory-viz", "-o", exported, run.trace});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    ProcessResult viz = memory_viz(exported, "print(_memory_viz.segsum(s))");
    ASSERT_EQ(viz.exit_code, 0) << viz.err;
    std::string reserved_mib = std::to_string(c.after_oversize / kMiB) + ".0MiB";
    EXPECT_NE(viz.out.find("\ntotal_reserved: " + reserved_mib + "\ntotal_allocated: 12.0MiB\n"), std::string::npos)
        << viz.out;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Out of memory for real: 400 MiB tensors on a 1 GiB device.

struct OomCase {
  const char* name;
  std::vector<std::string> args;
  EnvChanges env;
  int tensors;           // how many PyTorch got
  const char* message;   // PyTorch's own
};

const std::string kAdvice =
    " If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
    "avoid fragmentation.  See documentation for Memory Management  "
    "(https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)";

TEST(OutOfMemory, PytorchRaisesItsOwnErrorWithAndWithoutExpandableSegmentsAndAFraction) {
  REQUIRE_TORCH();
  const std::string allocated2 =
      "CUDA out of memory. Tried to allocate 400.00 MiB. GPU 0 has a total capacity of 1024.00 MiB of which 224.00 "
      "MiB is free. Of the allocated memory 800.00 MiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch "
      "but unallocated.";
  const std::string fraction =
      "CUDA out of memory. Tried to allocate 400.00 MiB. GPU 0 has a total capacity of 1024.00 MiB of which 624.00 "
      "MiB is free. 512.00 MiB allowed; Of the allocated memory 400.00 MiB is allocated by PyTorch, and 0 bytes is "
      "reserved by PyTorch but unallocated.";
  const EnvChanges expandable = {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}};
  for (const auto& [name, args, env, tensors, message] :
       {std::tuple{"cudaMalloc", std::vector<std::string>{}, EnvChanges{}, 2, allocated2 + kAdvice},
        // PyTorch leaves its advice out when expandable segments are on.
        std::tuple{"expandable segments", std::vector<std::string>{}, expandable, 2, allocated2},
        std::tuple{"memory fraction 0.5", std::vector<std::string>{"--fraction", "0.5"}, EnvChanges{}, 1,
                   fraction + kAdvice}}) {
    SCOPED_TRACE(name);
    TorchRun run = run_torch(kScripts + "/out_of_memory.py", args, "1GiB", env);
    ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
    ASSERT_EQ(run.objects.size(), 1u) << run.result.out;
    const nlohmann::json& oom = run.objects[0];
    EXPECT_EQ(oom["error"], "OutOfMemoryError");
    EXPECT_EQ(oom["message"], message);
    EXPECT_EQ(oom["tensors"], tensors);
    EXPECT_EQ(oom["allocated"], tensors * 400 * kMiB);
    EXPECT_EQ(oom["reserved"], tensors * 400 * kMiB);
    EXPECT_EQ(oom["free"], kGiB - tensors * 400 * kMiB);
    EXPECT_EQ(oom["ooms"], 1);
    EXPECT_EQ(oom["snapshot_before_error"], true) << "the tracer's observer runs before PyTorch raises";
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Under the tracer: the hook, its snapshots joined to the trace, our figures against PyTorch's.

// The history_entries of each TorchHook record (0: the program's own history setting was kept).
std::vector<uint64_t> torch_hooks(const std::string& trace) {
  trace::Reader reader(trace);
  std::vector<uint64_t> hooks;
  while (const trace::Record* record = reader.next())
    if (const auto* hook = std::get_if<trace::TorchHook>(record)) hooks.push_back(hook->history_entries);
  return hooks;
}

// The hook turned PyTorch's history on once and wrote the exit snapshot; every segment of the history is one of the
// trace's cudaMalloc allocations (2 MiB x3, 20 MiB x2, 26 MiB), and the trace has no other. memory_reserved and
// max_memory_reserved are the reserved view's final and peak bytes. The used view counts what the program asked for
// (4000 bytes, 25 MiB), where memory_allocated counts PyTorch's rounded blocks (4096 bytes, the whole 26 MiB
// block): its peak is max_memory_allocated less that rounding.
TEST_F(AllocatorSequence, TheSnapshotJoinsTheTraceAndOurFiguresArePytorchs) {
  EXPECT_EQ(torch_hooks(run().trace), std::vector<uint64_t>{100000}) << "GPUMEMTRACE_TORCH_ENTRIES' default";
  EXPECT_TRUE(file_exists(run().trace + ".torch-exit.pickle"));
  nlohmann::json summary = report({"summary", "--json", run().trace});
  const nlohmann::json& joined = summary["trace"]["pytorch_snapshots"];
  ASSERT_EQ(joined["joined"].size(), 1u) << joined.dump(1);
  EXPECT_EQ(joined["joined"][0]["file"], "root.trace.torch-exit.pickle");
  EXPECT_EQ(joined["segments"], 6);
  EXPECT_EQ(joined["missing_segments"], 0);
  EXPECT_EQ(joined["other_allocations"], 0);
  EXPECT_EQ(joined["expandable_segments"], false);
  for (const auto& [what, count] : joined["history_inconsistencies"].items()) EXPECT_EQ(count, 0) << what;

  const nlohmann::json& device = summary["devices"].at(0);
  EXPECT_EQ(device["reserved"]["peak_bytes"], run().steps.at("end")["max_reserved"]);
  EXPECT_EQ(device["reserved"]["peak_bytes"], kMaxReserved);
  EXPECT_EQ(device["reserved"]["final_bytes"], run().steps.at("end")["reserved"]);
  EXPECT_EQ(summary["view"], "used");
  EXPECT_EQ(device["peak_bytes"], 4000 + 16 * kMiB + 25 * kMiB);
  EXPECT_EQ(run().steps.at("unsplit_remainder")["allocated"], 4096 + 16 * kMiB + 26 * kMiB);
  EXPECT_EQ(device["final_bytes"], 0);
}

// The three cases of a PyTorch cache that would have held what failed, each with its remedy.
TEST(PytorchCacheVerdict, EachCaseGetsItsRemedyWithExactFigures) {
  REQUIRE_TORCH();
  constexpr uint64_t kTrainAsked = 1000 + 300 * kKiB + 700 * kKiB + 3 * kMiB + 12 * kMiB + 25 * kMiB;
  constexpr uint64_t kTensorsAsked = 6 * 30 * kMiB;
  struct Case {
    const char* name;
    std::string script;
    std::vector<std::string> args;
    const char* memory;
    EnvChanges env;
    size_t failures;  // the trace's out-of-memory failures
    const char* remedy;
    uint64_t heaps, reserved, allocated, free, idle;
  };
  const Case cases[] = {
      // Free memory split between tensors: 300 KiB and the end of the 2 MiB segment, 5 MiB of a 20 MiB one.
      {"split between tensors", kTorchWorkload, {"oom"}, "256MiB", {}, 2, "expandable-segments", 9,
       (2 + 20 + 26 + 6 * 30) * kMiB, kTrainAsked + kTensorsAsked,
       300 * kKiB + (2 * kMiB - 1024 - 2 * 300 * kKiB - 700 * kKiB) + 5 * kMiB, 0},
      // The same with expandable segments: one segment per pool, mapped in 2 MiB and 20 MiB pages. Free: the large
      // pool's 12 pages less its 220 MiB of tensors, and the small pool's page less its three tensors.
      {"expandable segments on", kTorchWorkload, {"oom"}, "256MiB",
       {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}}, 2, "max-split-size", 2, 242 * kMiB,
       kTrainAsked + kTensorsAsked, 20 * kMiB + (2 * kMiB - 1024 - 300 * kKiB - 700 * kKiB), 0},
      // A 600 MiB segment idle in the cache while the program's own cudaMalloc of 600 MiB fails.
      {"idle segment", kScripts + "/idle_cache.py", {}, "1GiB", {}, 1, "empty-cache", 1, 600 * kMiB, 0, 600 * kMiB,
       600 * kMiB},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TorchRun run = run_torch(c.script, c.args, c.memory, c.env);
    ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
    // Every segment of PyTorch's history is the trace's: a cudaMalloc, or with expandable segments the VMM
    // ranges mapped over it.
    const nlohmann::json joined = report({"summary", "--json", run.trace})["trace"]["pytorch_snapshots"];
    EXPECT_EQ(joined["missing_segments"], 0) << joined.dump(1);
    EXPECT_EQ(joined["other_allocations"], 0);
    EXPECT_EQ(joined["expandable_segments"], !c.env.empty());
    nlohmann::json ooms = report({"oom", "--json", run.trace})["ooms"];
    ASSERT_EQ(ooms.size(), c.failures) << ooms.dump(1);
    for (const nlohmann::json& oom : ooms) {
      EXPECT_EQ(oom["verdict"], "pytorch-cache");
      EXPECT_EQ(oom["cache_remedy"], c.remedy);
      const nlohmann::json& heaps = oom["heaps"];
      EXPECT_EQ(heaps["pytorch"], true);
      EXPECT_EQ(heaps["heaps"], c.heaps);
      EXPECT_EQ(heaps["reserved_bytes"], c.reserved);
      EXPECT_EQ(heaps["allocated_bytes"], c.allocated);
      EXPECT_EQ(heaps["free_bytes"], c.free);
      EXPECT_EQ(heaps["idle_bytes"], c.idle);
    }
    // The failed call starts at the script's own line: PyTorch's frames below it are behind --all-frames.
    const std::string script_name = std::filesystem::path(c.script).filename().string();
    ProcessResult text = run_gpumemtrace({"oom", run.trace});
    const std::string failed_call = "  failed call, innermost first:\n      " + script_name + ":";
    EXPECT_NE(text.out.find(failed_call), std::string::npos) << text.out;
  }
}

// `gpumemtrace snapshot PID` asks the running program for a snapshot of the real allocator.
TEST(SnapshotCommand, AsksTheRunningProgramForASnapshot) {
  REQUIRE_TORCH();
  TorchRun run = run_torch(kTorchWorkload, {"usr1", analyzer_path()}, "1GiB");
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  EXPECT_NE(run.result.out.find("snapshot command exit 0\nsnapshot command stdout: " + run.trace +
                                ".torch-usr1-1.pickle\n"),
            std::string::npos)
      << run.result.out;
  EXPECT_TRUE(file_exists(run.trace + ".torch-usr1-1.pickle"));
  EXPECT_EQ(torch_hooks(run.trace).size(), 1u);
}

// A program that records PyTorch's history itself keeps its setting: 3 entries, not the hook's 100000.
TEST(TorchHook, LeavesTheProgramsOwnHistoryAlone) {
  REQUIRE_TORCH();
  TorchRun run = run_torch(kScripts + "/own_history.py", {}, "1GiB");
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  ASSERT_EQ(run.objects.size(), 1u) << run.result.out;
  EXPECT_EQ(run.objects[0]["history"], 3);
  EXPECT_EQ(torch_hooks(run.trace), std::vector<uint64_t>{0});
  EXPECT_TRUE(file_exists(run.trace + ".torch-exit.pickle"));
}

}  // namespace
}  // namespace gpumemtrace::test

namespace gpumemtrace::test {
namespace {

// Garbage collection of the cache (garbage_collection_threshold, with a memory fraction): a 300 MiB block
// cached, then a 400 MiB request it cannot serve under 512 MiB allowed. With the threshold PyTorch frees the
// cached block before it asks for the new one; without, the fraction refuses the request first and PyTorch
// retries after freeing it. The driver sees the same three calls either way, and so does the trace.
TEST(GarbageCollection, FreesTheCacheBeforeAskingAndTheTraceSeesTheSameCalls) {
  REQUIRE_TORCH();
  for (const auto& [conf, retries] : {std::pair{"garbage_collection_threshold:0.5", 0}, std::pair{"", 1}}) {
    SCOPED_TRACE(conf);
    EnvChanges env;
    if (*conf) env.emplace("PYTORCH_CUDA_ALLOC_CONF", conf);
    TorchRun run = run_torch(kScripts + "/gc_and_graphs.py", {"gc"}, "1GiB", env);
    ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
    EXPECT_EQ(run.steps["cached"]["reserved"], 300 * kMiB);
    EXPECT_EQ(run.steps["cached"]["allocated"], 0);
    EXPECT_EQ(run.steps["bigger"]["reserved"], 400 * kMiB);
    EXPECT_EQ(run.steps["bigger"]["allocated"], 400 * kMiB);
    EXPECT_EQ(run.steps["bigger"]["retries"], retries);
    std::vector<std::string> calls;
    trace::Reader reader(run.trace);
    while (const trace::Record* record = reader.next()) {
      if (const auto* alloc = std::get_if<trace::Alloc>(record); alloc && alloc->size >= kMiB)
        calls.push_back("malloc " + std::to_string(alloc->size / kMiB));
      if (std::holds_alternative<trace::Free>(*record)) calls.push_back("free");
    }
    // PyTorch keeps its cache to the end: the process's exit frees the 400 MiB, not a cudaFree.
    EXPECT_EQ(calls, (std::vector<std::string>{"malloc 300", "free", "malloc 400"}));
  }
}

// CUDA graphs: the simulated runtime captures no work, so the capture fails with PyTorch's own error and the
// simulated runtime's one line naming the function; the program goes on.
TEST(CudaGraphs, CaptureFailsWithPytorchsErrorAndOneLineFromTheSimulatedRuntime) {
  REQUIRE_TORCH();
  TorchRun run = run_torch(kScripts + "/gc_and_graphs.py", {"graph"}, "1GiB");
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  ASSERT_TRUE(run.steps.contains("refused")) << run.result.out;
  EXPECT_NE(run.steps["refused"]["error"].get<std::string>().find("operation not supported"), std::string::npos)
      << run.steps["refused"];
  EXPECT_NE(run.result.err.find("gpumemtrace simulated CUDA runtime: cudaStreamBeginCapture is not supported: the "
                                "simulated driver captures no stream work into CUDA graphs\n"),
            std::string::npos)
      << run.result.err;
}

// ---------------------------------------------------------------------------------------------------------------
// export --format memory-viz --max-entries: PyTorch's own torch.cuda._memory_viz reads what it writes. A real
// snapshot read as a trace (its whole history exported is 636 entries) keeps its last 10 entries.

TEST(MemoryVizExport, MaxEntriesWritesWhatPytorchReads) {
  REQUIRE_TORCH();
  ScratchDir scratch;
  std::string snapshot = test_data_dir() + "/pytorch-snapshots/yiyi_oom_snapshot.pickle";
  std::string exported = scratch / "last10.pickle";
  ProcessResult e = run_gpumemtrace({"export", "--format", "memory-viz", "--max-entries", "10", "-o", exported, snapshot});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.err, "gpumemtrace: memory-viz: kept 10 history entries, left out 626: 626 before the last 10 of "
                   "each device (--max-entries)\n");
  ProcessResult viz = memory_viz(exported, "print(_memory_viz.trace(s))\nprint(_memory_viz.segsum(s))");
  ASSERT_EQ(viz.exit_code, 0) << viz.err;
  EXPECT_EQ(viz.out.rfind("Device 0 ----------------\n10 entries\n", 0), 0u) << viz.out;
  EXPECT_NE(viz.out.find("\ntotal_reserved: "), std::string::npos) << viz.out;
}

}  // namespace
}  // namespace gpumemtrace::test
