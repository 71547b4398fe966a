// gpumemtrace whatif without real PyTorch: what it refuses, and a program without PyTorch: the blocks its own pool
// allocator handed out, said with annotate.h (programs/heap_workload.cpp), replayed through the model of PyTorch's
// caching allocator, one table per device.
//
// The figures, from the allocator's rules (docs/whatif.md, "Rules modelled"):
// Device 0: a block of 1000 B, then ten of 6 MiB, on the default stream (heap records name none).
// - PyTorch's defaults: 1000 B rounds to 1024 B, in the small pool: a 2 MiB segment. 6 MiB (< 10 MiB) takes a
//   20 MiB segment, split while more than 1 MiB remains: 20 - 3 x 6 leaves 2 MiB, too small for the fourth, so
//   requests 1, 4, 7 and 10 each add a segment: 2 + 4 x 20 = 82 MiB reserved, 5 cudaMalloc calls. Once everything is
//   freed the whole 82 MiB is cached (the peak of reserved - allocated), the largest free block a whole 20 MiB
//   segment. It needs 82 MiB: on 81 MiB request 10's segment (62 + 20) does not fit and no segment is wholly free.
// - expandable_segments=True: the small pool maps one 2 MiB page; the large pool's segment maps 20 MiB pages at
//   its end as the blocks need them, the free tail merged with the new page: 18 of 20, 36 of 40, 60 of 60 MiB, so
//   3 pages: 62 MiB reserved in 4 mappings, fits in 62 MiB; freed, the 60 MiB merge into one free block.
// - memory=70MiB: the defaults run out of memory at request 10 (6 MiB; 62 + 20 > 70).
// The program's own heap on device 0 is 64 MiB.
// Device 1: three blocks of 12 MiB (>= 10 MiB: a segment of the request rounded to 2 MiB, not split), then the heap
// reset: defaults 3 x 12 = 36 MiB, 3 cudaMalloc calls, fitting in 36 MiB exactly (no slack); with expandable segments in 20 MiB pages: 12 of 20, then a
// second page for the second block (8 MiB free): 24 of 40, and the third fits in the 16 MiB left: 40 MiB, worse, so
// the defaults stay the recommendation. Its heap is 40 MiB.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/size_units.h"
#include "tests/support/source_lines.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {


nlohmann::json whatif_json(const std::string& trace, std::vector<std::string> options) {
  std::vector<std::string> args = {"whatif", "--json"};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back(trace);
  ProcessResult r = run_gpumemtrace(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(WhatifHeaps, ReplaysTheBlocksOfAnAnnotatedPoolThroughPytorchsAllocator) {
  TracedRun run = run_traced("report_prog_heaps", {"1"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
  nlohmann::json json =
      whatif_json(run.trace, {"--set", "expandable_segments=True", "--memory", "70MiB"});
  ASSERT_EQ(json["devices"].size(), 1u) << json.dump(1);
  const nlohmann::json& d = json["devices"][0];
  EXPECT_EQ(d["device"], 0);
  EXPECT_EQ(d["input"], "heap-blocks");
  EXPECT_EQ(d["input_text"], "the blocks handed out by heap 'pool' (annotate.h)");
  const nlohmann::json& replay = d["replay_of_recorded"];
  EXPECT_EQ(replay["requests"], 11);
  EXPECT_EQ(replay["recorded_peak_reserved_bytes"], 64 * kMiB);  // the program's heap
  EXPECT_EQ(replay["replayed_peak_reserved_bytes"], 82 * kMiB);
  EXPECT_EQ(replay["recorded_segment_events"], 0);
  EXPECT_EQ(replay["first_difference"], nullptr);
  EXPECT_EQ(replay["segments_not_compared"],
            "the program's own allocator is not PyTorch's: its heaps' memory is compared, not segments");
  ASSERT_EQ(d["scenarios"].size(), 3u);
  const nlohmann::json& defaults = d["scenarios"][0];
  EXPECT_EQ(defaults["name"], "PyTorch defaults");
  EXPECT_EQ(defaults["peak_reserved_bytes"], 82 * kMiB);
  EXPECT_EQ(defaults["peak_allocated_bytes"], 60 * kMiB + 1024);
  EXPECT_EQ(defaults["peak_fragmentation_bytes"], 82 * kMiB);
  EXPECT_EQ(defaults["largest_free_block_at_worst_bytes"], 20 * kMiB);
  EXPECT_EQ(defaults["cuda_malloc_calls"], 5);
  EXPECT_EQ(defaults["out_of_memory"], false);
  EXPECT_EQ(defaults["fits_in_bytes"], 82 * kMiB);
  const nlohmann::json& expandable = d["scenarios"][1];
  EXPECT_EQ(expandable["name"], "expandable_segments=True");
  EXPECT_EQ(expandable["peak_reserved_bytes"], 62 * kMiB);
  EXPECT_EQ(expandable["peak_fragmentation_bytes"], 62 * kMiB);
  EXPECT_EQ(expandable["largest_free_block_at_worst_bytes"], 60 * kMiB);
  EXPECT_EQ(expandable["fits_in_bytes"], 62 * kMiB);
  EXPECT_EQ(expandable["cuda_malloc_calls"], 4);  // mappings: the small page and the three large ones
  const nlohmann::json& small = d["scenarios"][2];
  EXPECT_EQ(small["name"], "memory=70.0 MiB");
  ASSERT_EQ(small["out_of_memory"], true);
  EXPECT_EQ(small["first_out_of_memory"]["request"], 10);
  EXPECT_EQ(small["first_out_of_memory"]["size_bytes"], 6 * kMiB);
  // The request's stack, from the heap record's, the user's frames first.
  EXPECT_EQ(small["first_out_of_memory"]["stack"],
            nlohmann::json::array(
                {"take (heap_workload.cpp:" +
                     std::to_string(line_containing(HEAP_WORKLOAD_SOURCE, "every block handed out")) + ")",
                 "main (heap_workload.cpp:" +
                     std::to_string(line_containing(HEAP_WORKLOAD_SOURCE, "the ten blocks of 6 MiB")) + ")"}))
      << small.dump(1);
  EXPECT_EQ(d["recommended"], "expandable_segments=True");

  ProcessResult text = run_gpumemtrace({"whatif", "--set", "expandable_segments=True", run.trace});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Settings: PyTorch's defaults (no snapshot records any)\n\n"
                          "device 0: input: the blocks handed out by heap 'pool' (annotate.h)\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Replay under PyTorch's defaults: 11 requests; peak reserved 64.0 MiB (67108864 B) by the "
                          "program's heaps, 82.0 MiB (85983232 B) by the model\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Recommended: expandable_segments=True: fits in 62.0 MiB instead of 82.0 MiB"),
            std::string::npos)
      << text.out;
}

// Two devices with blocks: a table each, with its own figures and recommendation.
TEST(WhatifHeaps, EveryDeviceWithBlocksGetsItsTable) {
  TracedRun run = run_traced("report_prog_heaps", {"2"}, {{"GPUMEMTRACE_SIM_DEVICES", "2"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
  nlohmann::json json = whatif_json(run.trace, {"--set", "expandable_segments=True"});
  ASSERT_EQ(json["devices"].size(), 2u) << json.dump(1);
  EXPECT_EQ(json["devices"][0]["device"], 0);
  EXPECT_EQ(json["devices"][0]["scenarios"][0]["peak_reserved_bytes"], 82 * kMiB);
  EXPECT_EQ(json["devices"][0]["scenarios"][1]["peak_reserved_bytes"], 62 * kMiB);
  EXPECT_EQ(json["devices"][0]["recommended"], "expandable_segments=True");
  const nlohmann::json& d1 = json["devices"][1];
  EXPECT_EQ(d1["device"], 1);
  EXPECT_EQ(d1["replay_of_recorded"]["requests"], 3);
  EXPECT_EQ(d1["replay_of_recorded"]["recorded_peak_reserved_bytes"], 40 * kMiB);
  EXPECT_EQ(d1["scenarios"][0]["peak_reserved_bytes"], 36 * kMiB);
  EXPECT_EQ(d1["scenarios"][0]["cuda_malloc_calls"], 3);
  EXPECT_EQ(d1["scenarios"][0]["fits_in_bytes"], 36 * kMiB);
  EXPECT_EQ(d1["scenarios"][1]["peak_reserved_bytes"], 40 * kMiB);
  EXPECT_EQ(d1["recommended"], "PyTorch defaults");
}

// A heap as the NVTX memory extension records one (no device, no memory said), with a block freed later
// (SubFreeRequested, then its SubFree): 300,000 B (small pool: a 2 MiB segment), 12 MiB (>= 10 MiB: a 12 MiB segment,
// nothing left to split), its free requested, 10 MiB (the 12 MiB block is not free yet: a 10 MiB segment), the free
// completed, 12 MiB again (reuses the first 12 MiB block), the heap reset: 2 + 12 + 10 = 24 MiB in 3 cudaMalloc calls.
// Freed at the request, the 12 MiB block would have been split for the 10 MiB and the last 12 MiB would need a
// segment: 26 MiB; never freed, 36 MiB.
TEST(WhatifHeaps, AHeapOfNoDeviceIsReplayedWithItsFreesCompletedLater) {
  using trace::SubAlloc, trace::SubFree, trace::SubFreeRequested;
  constexpr uint64_t kBase = 0x7f0000000000;
  TraceBuilder b;
  b.thread_new(1, 1, "main");
  b.event(trace::HeapCreate{{}, 1, trace::kNoDevice, kBase, 0, "regions"}, 1000);
  b.event(SubAlloc{{}, 1, kBase, 300000, 0, 0}, 1000);
  b.event(SubAlloc{{}, 1, kBase + kMiB, 12 * kMiB, 0, 0}, 1000);
  b.event(SubFreeRequested{{}, 1, kBase + kMiB}, 1000);
  b.event(SubAlloc{{}, 1, kBase + 13 * kMiB, 10 * kMiB, 0, 0}, 1000);
  b.event(SubFree{{}, 1, kBase + kMiB}, 1000);
  b.event(SubAlloc{{}, 1, kBase + 25 * kMiB, 12 * kMiB, 0, 0}, 1000);
  b.event(trace::HeapReset{{}, 1}, 1000);
  b.end(8, 1000);
  ScratchDir scratch;
  std::string trace = write_file(scratch / "regions.trace", b.bytes());
  nlohmann::json json = whatif_json(trace, {});
  ASSERT_EQ(json["devices"].size(), 1u) << json.dump(1);
  const nlohmann::json& d = json["devices"][0];
  EXPECT_EQ(d["device"], nullptr);
  EXPECT_EQ(d["input_text"], "the blocks handed out by heap 'regions' (annotate.h or the NVTX memory extension)");
  EXPECT_EQ(d["replay_of_recorded"]["requests"], 4);
  EXPECT_EQ(d["replay_of_recorded"]["recorded_peak_reserved_bytes"], nullptr);
  EXPECT_EQ(d["scenarios"][0]["peak_reserved_bytes"], 24 * kMiB);
  EXPECT_EQ(d["scenarios"][0]["cuda_malloc_calls"], 3);
  ProcessResult text = run_gpumemtrace({"whatif", trace});
  EXPECT_NE(text.out.find("\ndevice not said: input: the blocks handed out by heap 'regions'"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("peak reserved not known by the program's heaps (a heap did not say its memory), 24.0 MiB "
                          "(25165824 B) by the model\n"),
            std::string::npos)
      << text.out;
}

// A legacy snapshot (blocks carry their own history, no device_traces): nothing to replay, said, exit 2 (before, a
// table of a replay of no request).
TEST(WhatifCommand, ASnapshotWithoutHistoryIsRefusedWithExit2) {
  std::string snapshot = test_data_dir() + "/pytorch-snapshots/yiyi_oom_snapshot.pickle";
  ProcessResult r = run_gpumemtrace({"whatif", snapshot});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpumemtrace: " + snapshot +
                       ": PyTorch's history has no entry to replay: the snapshots have no device_traces "
                       "(_record_memory_history was off, or the older form that keeps a history per block)\n");
  EXPECT_EQ(r.out, "");
}

TEST(WhatifCommand, ATraceWithNeitherHistoryNorHeapsIsRefusedWithExit2) {
  TracedRun run = run_traced("report_prog_steps", {"2", "4", "32"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
  ProcessResult r = run_gpumemtrace({"whatif", run.trace});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no PyTorch snapshot and no block of a sub-allocator's heap in this trace"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace gpumemtrace::test
