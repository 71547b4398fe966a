// The allocator model's oracle: real PyTorch 2.14.1 on the simulated device records its history from before its
// first allocation (allocator_replay.py); the history, joined from the snapshot, replayed through the model under
// the recorded settings (the defaults) gives the same segment allocations and frees, in the same order and sizes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/allocator_model/history_replay.h"
#include "analyzer/sources/snapshot_join_steps.h"
#include "tests/pytorch/torch_run.h"

namespace gpumemtrace::test {
namespace {

const std::string kScript = std::string(GMT_PYTORCH_TESTS) + "/allocator_replay.py";

allocator_model::HistoryReplay replay_workload(const std::string& workload) {
  std::string dir = make_temp_dir();
  TorchRun run = run_torch(kScript, {workload, dir + "/history.pickle"}, "16GiB");
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
  allocator_model::Settings settings;
  settings.device_memory = 16 * kGiB;
  return allocator_model::replay_history(taken, history, 0, settings);
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

class AllocatorReplay : public testing::Test {
 protected:
  void SetUp() override { REQUIRE_TORCH(); }
};

// Sizes from 200 B to 40 MiB freed out of order, two rounds with empty_cache after each: 17 segments allocated
// and 17 freed, the same as PyTorch's, and its peak reserved to the byte (measured: 205,520,896 B).
TEST_F(AllocatorReplay, AFragmentingMixReproducesEverySegmentEvent) {
  allocator_model::HistoryReplay r = replay_workload("fragmenting_mix");
  EXPECT_TRUE(r.initial_state_empty);
  EXPECT_EQ(r.requests, 120u);
  EXPECT_EQ(r.unknown_frees, 0u);
  EXPECT_EQ(r.empty_caches, 2u);
  EXPECT_EQ(r.recorded.size(), 34u);
  EXPECT_FALSE(r.first_difference) << around(r);
  EXPECT_EQ(r.counters.peak_reserved, r.recorded_peak_reserved);
  EXPECT_EQ(r.recorded_peak_reserved, 205520896u);
}

// 400 small-pool requests on two streams: 51 segments of 2 MiB, none freed, as PyTorch allocated them.
TEST_F(AllocatorReplay, SmallTensorsOnTwoStreamsReproduceEverySegmentEvent) {
  allocator_model::HistoryReplay r = replay_workload("small_tensors");
  EXPECT_TRUE(r.initial_state_empty);
  EXPECT_EQ(r.requests, 400u);
  EXPECT_EQ(r.recorded.size(), 51u);
  EXPECT_FALSE(r.first_difference) << around(r);
  EXPECT_EQ(r.counters.peak_reserved, r.recorded_peak_reserved);
  EXPECT_EQ(r.recorded_peak_reserved, 51 * 2 * kMiB);
}

}  // namespace
}  // namespace gpumemtrace::test
