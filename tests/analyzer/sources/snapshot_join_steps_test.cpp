// The steps of the snapshot join (analyzer/sources/snapshot_join_steps.h), each on hand-made inputs whose
// outcome is known. open_segments, take_step and write_history drive the history writer over real snapshots:
// snapshot_join_test.cpp covers them through join_snapshots.
#include <gtest/gtest.h>

#include <fstream>

#include "analyzer/sources/snapshot_join_steps.h"
#include "common/time_units.h"
#include "tests/support/temp_files.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {
namespace {

using namespace sources::join;
using Api = format::Api;
using pytorch::HistoryStep;

Instance segment(uint64_t ordinal, uint64_t address, uint64_t size, uint64_t opened_ns, uint64_t closed_ns,
                 bool expandable = false, size_t step = 0) {
  return {{ordinal, 0, address, size, expandable, opened_ns}, step, closed_ns};
}

TEST(SnapshotJoinSteps, LoadSnapshotsSaysWhyEachFileCannotBeRead) {
  ScratchDir scratch;
  std::ofstream(scratch / "not_a_pickle.pickle") << "plain text";
  std::vector<sources::NamedSnapshot> named = {{"../elsewhere.pickle"}, {"missing.pickle"}, {"not_a_pickle.pickle"}};
  std::vector<std::string> unreadable;
  std::vector<LoadedSnapshot> loaded = load_snapshots(scratch / "t.trace", named, unreadable);
  EXPECT_TRUE(loaded.empty());
  ASSERT_EQ(unreadable.size(), 3u);
  EXPECT_EQ(unreadable[0], "../elsewhere.pickle: not the name of a file beside the trace");
  EXPECT_EQ(unreadable[1], scratch / "missing.pickle" + ": no such file");
  EXPECT_EQ(unreadable[2].rfind(scratch / "not_a_pickle.pickle" + ": not a PyTorch memory snapshot: ", 0), 0u)
      << unreadable[2];
}

// The records the reader hands out (not the Time and Device records before them): an Alloc (record 1, at
// 10 µs), an Alloc of VMM handle 7 (2, 20 µs), a MemMap of it (3, 30 µs), a Free (4, 40 µs), an AllocFailed out
// of memory (5, 50 µs).
TEST(SnapshotJoinSteps, ReadTraceFindsTheCandidatesWhereStepsFallAndTheFailures) {
  ScratchDir scratch;
  TraceBuilder b;
  b.alloc(Api::cuMemAlloc, 0, 0x1000, 0x100, 0, 10 * kUs)
      .alloc(Api::cuMemCreate, 0, 7, 0x200, 0, 10 * kUs)
      .mem_map(0x20000, 0x100, 7, 0, 10 * kUs)
      .free(Api::cuMemFree, 0x1000, 10 * kUs)
      .alloc_failed(Api::cudaMalloc, 0, 0x4000, 0, format::kErrorOutOfMemory, 10 * kUs);
  std::string path = write_file(scratch / "t.trace", b.bytes());
  std::vector<Instance> instances = {segment(0, 0x1000, 0x100, 10 * kUs, 40 * kUs),
                                     segment(1, 0x20000, 0x200, 30 * kUs, UINT64_MAX, true)};
  std::vector<HistoryStep> steps(3);
  steps[0].time_ns = 15 * kUs;
  steps[1].time_ns = 45 * kUs;
  steps[2].time_ns = 60 * kUs;

  TraceFacts facts = read_trace(path, UINT64_MAX, instances, steps);
  ASSERT_EQ(facts.lifetimes.size(), 2u);
  const Lifetime& pointer = facts.lifetimes[0];
  EXPECT_FALSE(pointer.mapping);
  EXPECT_EQ(pointer.address, 0x1000u);
  EXPECT_EQ(pointer.begin_record, 1u);
  EXPECT_EQ(pointer.begin_ns, 10 * kUs);
  EXPECT_EQ(pointer.end_ns, 40 * kUs);
  const Lifetime& mapping = facts.lifetimes[1];
  EXPECT_TRUE(mapping.mapping);
  EXPECT_EQ(mapping.device, 0);  // the device of VMM handle 7
  EXPECT_EQ(mapping.handle, 7u);
  EXPECT_EQ(mapping.begin_record, 3u);
  EXPECT_EQ(mapping.end_ns, UINT64_MAX);
  EXPECT_EQ(facts.step_records, (std::vector<uint64_t>{1, 4, 5}));
  ASSERT_EQ(facts.failures.size(), 1u);
  EXPECT_EQ(facts.failures[0].record, 5u);
  EXPECT_EQ(facts.failures[0].time_ns, 50 * kUs);
  EXPECT_EQ(facts.device_allocations, 2u);
  EXPECT_EQ(facts.device_bytes, 0x300u);
  EXPECT_EQ(facts.vmm.at(7).size, 0x200u);

  // Only as far as the analysis read: the first 3 records.
  TraceFacts first = read_trace(path, 3, instances, steps);
  EXPECT_EQ(first.device_allocations, 2u);
  EXPECT_TRUE(first.failures.empty());
  EXPECT_EQ(first.step_records, (std::vector<uint64_t>{1, 3, 3}));
}

TEST(SnapshotJoinSteps, MatchSegmentsTakesTheLongestOverlapOrTheCoveringMappings) {
  std::vector<Instance> instances = {
      segment(0, 0x1000, 0x100, 10 * kUs, 50 * kUs),                  // two allocations there; the 2nd overlaps most
      segment(1, 0x9000, 0x100, 10 * kUs, 50 * kUs),                  // nothing of the trace there
      segment(2, 0x20000, 0x200, 10 * kUs, UINT64_MAX, true),         // two mappings cover it
      segment(3, 0x40000, 0x200, 10 * kUs, UINT64_MAX, true)};        // one mapping covers half of it
  TraceFacts facts;
  facts.lifetimes = {{0, 0x1000, 0x100, 0, 2, 0, 12 * kUs},
                     {0, 0x1000, 0x100, 0, 4, 13 * kUs, 60 * kUs},
                     {0, 0x20000, 0x100, 7, 6, 5 * kUs, UINT64_MAX, true},
                     {0, 0x20100, 0x100, 7, 8, 6 * kUs, UINT64_MAX, true},
                     {0, 0x40000, 0x100, 8, 9, 6 * kUs, UINT64_MAX, true}};
  sources::JoinInfo info;
  SegmentMatch match = match_segments(instances, facts, info);
  EXPECT_EQ(match.kept, (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(match.opens_after[0], 1u);
  EXPECT_EQ(match.opens_after[2], 3u);  // the later of the two mappings
  EXPECT_FALSE(match.opens_after[1]);
  EXPECT_EQ(info.segments, 2u);
  EXPECT_EQ(info.missing_segments, 2u);
  EXPECT_EQ(info.missing_segment_bytes, 0x300u);
  EXPECT_EQ(info.expandable_segments, true);
  EXPECT_FALSE(facts.lifetimes[0].joined);
  EXPECT_TRUE(facts.lifetimes[1].joined);
  EXPECT_TRUE(facts.lifetimes[2].joined && facts.lifetimes[3].joined);
  EXPECT_FALSE(facts.lifetimes[4].joined);
}

TEST(SnapshotJoinSteps, MatchOomsTakesTheDevicesLastFailureSinceTheEntryBefore) {
  pytorch::Snapshot snapshot;
  snapshot.device_traces.resize(1);
  snapshot.device_traces[0].resize(3);
  snapshot.device_traces[0][0].action = pytorch::schema::Action::Alloc;
  snapshot.device_traces[0][1].action = pytorch::schema::Action::Oom;
  snapshot.device_traces[0][2].action = pytorch::schema::Action::Oom;
  std::vector<pytorch::TakenSnapshot> taken = {{&snapshot}};
  std::vector<HistoryStep> steps(3);
  for (size_t i = 0; i < steps.size(); ++i) steps[i].entry = i;
  steps[0].time_ns = 50 * kUs;
  steps[1].time_ns = 205 * kUs;
  steps[2].time_ns = 3000 * kUs;
  std::vector<Failure> failures = {{0, 5, 100 * kUs}, {0, 9, 200 * kUs}, {1, 12, 210 * kUs}};
  sources::JoinInfo info;
  std::vector<std::optional<size_t>> failure_of = match_ooms(steps, taken, failures, info);
  EXPECT_FALSE(failure_of[0]);      // not an oom entry
  EXPECT_EQ(failure_of[1], 1u);     // the last of device 0's failures before it
  EXPECT_FALSE(failure_of[2]);      // device 0 has no failure after those taken
  EXPECT_EQ(info.unmatched_ooms, 1u);
}

TEST(SnapshotJoinSteps, PlaceStepsKeepsOrderAndGoesAfterTheSegmentsAllocation) {
  std::vector<HistoryStep> steps(3);
  steps[0].time_ns = 10 * kUs;
  steps[1].time_ns = 20 * kUs;
  steps[2].time_ns = 30 * kUs;
  std::vector<Instance> instances = {segment(0, 0x1000, 0x100, 20 * kUs, UINT64_MAX, false, 1)};
  TraceFacts facts;
  facts.step_records = {2, 5, 4};
  facts.lifetimes = {{0, 0x1000, 0x100, 0, 7, 25 * kUs}};
  SegmentMatch match{{true}, {0}};
  std::vector<std::optional<size_t>> no_failures(3);
  Placement placement = place_steps(steps, instances, match, facts, no_failures);
  EXPECT_EQ(placement.position, (std::vector<uint64_t>{2, 7, 7}));
  EXPECT_EQ(placement.time_ns, (std::vector<uint64_t>{10 * kUs, 25 * kUs, 30 * kUs}));
}

TEST(SnapshotJoinSteps, PlaceStepsPutsTheStepsBeforeAnOomEntryBeforeItsFailure) {
  std::vector<HistoryStep> steps(3);
  steps[0].time_ns = 10 * kUs;
  steps[1].time_ns = 20 * kUs;
  steps[2].time_ns = 30 * kUs;
  TraceFacts facts;
  facts.step_records = {5, 5, 9};
  facts.failures = {{0, 4, 15 * kUs}};
  std::vector<std::optional<size_t>> failure_of = {std::nullopt, 0, std::nullopt};
  Placement placement = place_steps(steps, {}, SegmentMatch{}, facts, failure_of);
  EXPECT_EQ(placement.position, (std::vector<uint64_t>{3, 5, 9}));
  EXPECT_EQ(placement.time_ns, (std::vector<uint64_t>{10 * kUs, 20 * kUs, 30 * kUs}));
}

TEST(SnapshotJoinSteps, CountOtherMemoryCountsAVmmAllocationOnce) {
  TraceFacts facts;
  facts.device_allocations = 4;
  facts.device_bytes = 1000;
  facts.vmm[7] = {0, 300};
  facts.lifetimes = {{0, 0x1000, 100, 0, 1, 0, UINT64_MAX, false, true},
                     {0, 0x20000, 150, 7, 2, 0, UINT64_MAX, true, true},
                     {0, 0x20100, 150, 7, 3, 0, UINT64_MAX, true, true},
                     {0, 0x30000, 150, 7, 4, 0, UINT64_MAX, true, false}};
  sources::JoinInfo info;
  count_other_memory(facts, info);
  EXPECT_EQ(info.other_allocations, 2u);
  EXPECT_EQ(info.other_bytes, 600u);
}

TEST(SnapshotJoinSteps, DescribeSnapshotsTakesTheEarliestBeginningAndAnyExpandable) {
  std::vector<LoadedSnapshot> loaded(2);
  loaded[0].named.file = "a.pickle";
  loaded[1].named.file = "b.pickle";
  loaded[0].snapshot.settings.emplace().expandable_segments = false;
  loaded[1].snapshot.settings.emplace().expandable_segments = true;
  pytorch::JoinedHistory history;
  history.parts.resize(2);
  history.parts[0].begins_ns = 40 * kUs;
  history.parts[1].begins_ns = 30 * kUs;
  std::vector<uint64_t> state_changes = {0, 3};
  sources::JoinInfo info;
  describe_snapshots(loaded, history, state_changes, info);
  ASSERT_EQ(info.snapshots.size(), 2u);
  EXPECT_EQ(info.snapshots[1].named.file, "b.pickle");
  EXPECT_EQ(info.snapshots[1].state_changes, 3u);
  EXPECT_EQ(info.history_begins_ns, 30 * kUs);
  EXPECT_EQ(info.expandable_segments, true);
}

}  // namespace
}  // namespace gpumemtrace::test
