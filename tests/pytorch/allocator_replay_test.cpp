// The allocator model's oracle: real PyTorch 2.14.1 on the simulated device records its history from before its
// first allocation (allocator_replay.py), under the settings the test puts in PYTORCH_CUDA_ALLOC_CONF; the history,
// joined from the snapshot, replayed through the model under the settings the snapshot recorded gives the same
// segment allocations and frees, in the same order and sizes, and the same peak reserved.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/allocator_model/history_replay.h"
#include "analyzer/allocator_model/recorded_settings.h"
#include "analyzer/sources/snapshot_join_steps.h"
#include "tests/pytorch/torch_run.h"

namespace gpumemtrace::test {
namespace {

const std::string kAllocatorReplayScript = std::string(GMT_PYTORCH_TESTS) + "/allocator_replay.py";

struct Replayed {
  allocator_model::Settings settings;  // as the snapshot recorded them
  allocator_model::HistoryReplay replay;
};

// Runs the workload under PYTORCH_CUDA_ALLOC_CONF=`conf` on a 16 GiB device and replays its history under the
// snapshot's settings. The memory fraction is not in a snapshot: `fraction` is the one the workload sets.
Replayed replay_workload(const std::string& workload, const std::string& conf = "",
                         std::optional<double> fraction = std::nullopt) {
  std::string dir = make_temp_dir();
  EnvChanges env;
  if (!conf.empty()) env.emplace("PYTORCH_CUDA_ALLOC_CONF", conf);
  TorchRun run = run_torch(kAllocatorReplayScript, {workload, dir + "/history.pickle"}, "16GiB", env);
  EXPECT_EQ(run.result.exit_code, 0) << describe(run.result);
  EXPECT_EQ(run.checks["done"], true);
  std::vector<sources::NamedSnapshot> named(1);
  named[0].file = "history.pickle";
  named[0].taken_ns = named[0].taken_wall_ns = UINT64_MAX / 2;  // one snapshot: its clock is its own
  std::vector<std::string> unreadable;
  std::vector<sources::join::LoadedSnapshot> loaded = sources::join::load_snapshots(dir + "/t.trace", named, unreadable);
  EXPECT_TRUE(unreadable.empty()) << unreadable.at(0);
  std::vector<pytorch::TakenSnapshot> taken;
  for (sources::join::LoadedSnapshot& s : loaded)
    taken.push_back({&s.snapshot, s.reader.get(), s.named.taken_ns, s.named.taken_wall_ns});
  pytorch::JoinedHistory history = pytorch::join_histories(taken);
  Replayed out;
  out.settings.device_memory = 16 * kGiB;
  out.settings.per_process_memory_fraction = fraction;
  EXPECT_TRUE(loaded.at(0).snapshot.settings.has_value());
  out.settings = allocator_model::recorded_settings(*loaded.at(0).snapshot.settings, out.settings);
  out.replay = allocator_model::replay_history(taken, history, 0, out.settings);
  return out;
}

size_t count(const allocator_model::HistoryReplay& r, allocator_model::SegmentEvent::Kind kind) {
  return static_cast<size_t>(std::count_if(r.recorded.begin(), r.recorded.end(),
                                           [&](const allocator_model::SegmentEvent& e) { return e.kind == kind; }));
}

std::string around(const allocator_model::HistoryReplay& r) {
  if (!r.first_difference) return "";
  size_t i = *r.first_difference;
  std::string out = "first difference at " + std::to_string(i);
  for (size_t j = i > 2 ? i - 2 : 0; j < i + 3; ++j)
    out += "\n  recorded " + (j < r.recorded.size() ? allocator_model::describe(r.recorded[j]) : "-") + " | model " +
           (j < r.modelled.size() ? allocator_model::describe(r.modelled[j]) : "-");
  return out;
}

// The replay began empty, as the history did, replayed `requests` requests and every one of the `segments`
// recorded segment events the same, and reached the recorded peak reserved, `peak`.
void expect_reproduced(const allocator_model::HistoryReplay& r, uint64_t requests, size_t segments, uint64_t peak) {
  EXPECT_TRUE(r.initial_state_empty);
  EXPECT_EQ(r.requests, requests);
  EXPECT_EQ(r.unknown_frees, 0u);
  EXPECT_EQ(r.recorded.size(), segments);
  EXPECT_FALSE(r.first_difference) << around(r);
  EXPECT_EQ(r.counters.peak_reserved, r.recorded_peak_reserved);
  EXPECT_EQ(r.recorded_peak_reserved, peak);
}

class AllocatorReplay : public testing::Test {
 protected:
  void SetUp() override { REQUIRE_TORCH(); }
};

// Sizes from 200 B to 40 MiB freed out of order, two rounds with empty_cache after each: 17 segments allocated
// and 17 freed, the same as PyTorch's, and its peak reserved to the byte (measured: 205,520,896 B).
TEST_F(AllocatorReplay, AFragmentingMixReproducesEverySegmentEvent) {
  allocator_model::HistoryReplay r = replay_workload("fragmenting_mix").replay;
  expect_reproduced(r, 120, 34, 205520896u);
  EXPECT_EQ(r.empty_caches, 2u);
}

// 400 small-pool requests on two streams: 51 segments of 2 MiB, none freed, as PyTorch allocated them.
TEST_F(AllocatorReplay, SmallTensorsOnTwoStreamsReproduceEverySegmentEvent) {
  allocator_model::HistoryReplay r = replay_workload("small_tensors").replay;
  expect_reproduced(r, 400, 51, 51 * 2 * kMiB);
}

// Tensors used on two side streams (record_stream) and freed while they may still be in use there: 39 of the 120
// frees complete later, when the side stream's events do.
TEST_F(AllocatorReplay, RecordStreamOnTwoStreamsReproducesEverySegmentEvent) {
  allocator_model::HistoryReplay r = replay_workload("record_stream").replay;
  expect_reproduced(r, 120, 8, 195035136u);
}

// Six steps of Adam over an elementwise model: parameters, gradients, both moments, activations.
TEST_F(AllocatorReplay, AnAdamTrainingLoopReproducesEverySegmentEvent) {
  allocator_model::HistoryReplay r = replay_workload("adam_training").replay;
  expect_reproduced(r, 274, 10, 134217728u);
}

// The fragmenting mix with expandable segments: pages mapped into one segment per stream and pool, and unmapped
// by empty_cache (4 unmappings); the snapshot's settings say expandable_segments is on.
TEST_F(AllocatorReplay, ExpandableSegmentsReproduceEveryMapAndUnmap) {
  Replayed run = replay_workload("fragmenting_mix", "expandable_segments:True");
  allocator_model::HistoryReplay& r = run.replay;
  EXPECT_TRUE(run.settings.expandable_segments);
  expect_reproduced(r, 120, 23, 213909504u);
  EXPECT_EQ(count(r, allocator_model::SegmentEvent::Kind::Unmap), 4u);
}

// A memory fraction of 1/32 with garbage_collection_threshold 0.5 (and max_split_size_mb, rounding divisions,
// read back from the snapshot): 22 cached segments released (garbage collection above 256 MiB, and cached blocks
// of 200 MiB or more for a request that does not fit) as the real allocator released them; 26 allocated.
TEST_F(AllocatorReplay, AMemoryFractionWithGarbageCollectionReproducesEverySegmentEvent) {
  Replayed run = replay_workload("memory_fraction_gc", "garbage_collection_threshold:0.5,max_split_size_mb:200,"
                                 "roundup_power2_divisions:[32:4,>:2]", 1.0 / 32);
  allocator_model::HistoryReplay& r = run.replay;
  EXPECT_EQ(run.settings.garbage_collection_threshold, 0.5);
  EXPECT_EQ(run.settings.max_split_size, 200 * kMiB);
  EXPECT_EQ(run.settings.divisions_for(40 * kMiB), 4u);
  EXPECT_EQ(run.settings.divisions_for(100 * kMiB), 2u);
  expect_reproduced(r, 84, 48, 331350016u);
  EXPECT_EQ(count(r, allocator_model::SegmentEvent::Kind::Free), 22u);
}

}  // namespace
}  // namespace gpumemtrace::test
