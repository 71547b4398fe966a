// The replay's event selection (analyzer/replay/event_selection.h: export's --device, --from, --to,
// --min-size) and its allocation listener (lifetimes.h), on a hand-built trace with known times.
#include <gtest/gtest.h>

#include "analyzer/replay/lifetimes.h"
#include "tests/analyzer/report_helpers.h"

namespace gpumemtrace::test {
namespace {

using format::Api;

// Times in ns:
//   1000 alloc device 0 0x1000   100 B   stack 1
//   2000 alloc device 1 0x2000  5000 B   stack 1
//   3000 alloc device 0 0x3000  4000 B   stack 2
//   4000 free 0x1000
//   5000 alloc device 0 0x4000    50 B   stack 2
//   6000 free 0x3000
//   7000 out of memory on device 0 (1 TiB)
//   8000 free 0x2000
//   9000 end
TraceBuilder selection_trace() {
  TraceBuilder b;
  b.stack_node(0, 0xA000).stack_node(0, 0xB000);
  b.alloc(Api::cudaMalloc, 0, 0x1000, 100, 1, 1000);
  b.alloc(Api::cudaMalloc, 1, 0x2000, 5000, 1, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x3000, 4000, 2, 1000);
  b.free(Api::cudaFree, 0x1000, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x4000, 50, 2, 1000);
  b.free(Api::cudaFree, 0x3000, 1000);
  b.alloc_failed(Api::cudaMalloc, 0, uint64_t{1} << 40, 1, format::kErrorOutOfMemory, 1000);
  b.free(Api::cudaFree, 0x2000, 1000);
  b.end(8, 1000);
  return b;
}

class ReplaySelection : public testing::Test {
 protected:
  analysis::Analysis analyze(replay::EventSelection selection, replay::AllocationListener* listener = nullptr) {
    replay::ReplayOptions options;
    options.selection = selection;
    options.listener = listener;
    return analysis::analyze(write_file(scratch_ / "selection.trace", selection_trace().bytes()), options);
  }
  ScratchDir scratch_;
};

TEST_F(ReplaySelection, ADeviceLeavesTheOthersOutAndTheirFreesAreNoInconsistency) {
  analysis::Analysis analysis = analyze({.device = 0});
  const replay::Replay& replay = *analysis.replay;
  EXPECT_EQ(replay.accounts().find_device(1), nullptr);
  EXPECT_EQ(replay.accounts().find_device(0)->allocations, 3u);
  EXPECT_EQ(replay.accounts().find_device(0)->peak_bytes, 4100u);
  EXPECT_EQ(replay.failures().size(), 1u);
  EXPECT_EQ(replay.inconsistencies().total(), 0u);
}

TEST_F(ReplaySelection, AMinimumSizeKeepsOnlyTheLargerAllocations) {
  analysis::Analysis analysis = analyze({.min_size = 1000});
  const replay::Replay& replay = *analysis.replay;
  EXPECT_EQ(replay.accounts().find_device(0)->allocations, 1u);
  EXPECT_EQ(replay.accounts().find_device(0)->peak_bytes, 4000u);
  EXPECT_EQ(replay.accounts().find_device(0)->live_bytes, 0u);
  EXPECT_EQ(replay.accounts().find_device(1)->peak_bytes, 5000u);
  EXPECT_EQ(replay.failures().size(), 1u);  // failures are kept whatever their size
  EXPECT_EQ(replay.inconsistencies().total(), 0u);
}

TEST_F(ReplaySelection, AWindowTakesWhatWasAllocatedInItAndEndsAtItsEnd) {
  analysis::Analysis analysis = analyze({.from_ns = 2500, .to_ns = 6500});
  const replay::Replay& replay = *analysis.replay;
  const replay::Account& device = *replay.accounts().find_device(0);
  EXPECT_EQ(device.allocations, 2u);  // 0x3000 and 0x4000
  EXPECT_EQ(device.frees, 1u);        // 0x3000; the free of 0x1000 (allocated before) is left out
  EXPECT_EQ(device.peak_bytes, 4050u);
  EXPECT_EQ(device.peak_time_ns, 5000u);
  EXPECT_EQ(device.live_bytes, 50u);
  EXPECT_EQ(replay.accounts().find_device(1), nullptr);
  EXPECT_TRUE(replay.failures().empty());  // at 7000, after the window
  EXPECT_EQ(replay.end_time_ns(), 6500u);
  EXPECT_EQ(replay.inconsistencies().total(), 0u);
}

struct Ended {
  uint64_t address;
  uint64_t time_ns;
  std::optional<uint64_t> freed_ns;
  bool operator==(const Ended&) const = default;
};

TEST_F(ReplaySelection, TheListenerHearsOfEachAllocationTakenAndItsEnd) {
  std::vector<Ended> ended;
  replay::Lifetimes lifetimes([&](const replay::AllocationEvent& a, std::optional<uint64_t> freed_ns) {
    ended.push_back({a.address, a.time_ns, freed_ns});
  });
  analyze({.from_ns = 1500}, &lifetimes);
  lifetimes.finish();
  EXPECT_EQ(ended, (std::vector<Ended>{{0x3000, 3000, 6000}, {0x2000, 2000, 8000}, {0x4000, 5000, std::nullopt}}));
}

TEST(Lifetimes, AFreeTheDriverRefusedIsUndone) {
  std::vector<Ended> ended;
  replay::Lifetimes lifetimes([&](const replay::AllocationEvent& a, std::optional<uint64_t> freed_ns) {
    ended.push_back({a.address, a.time_ns, freed_ns});
  });
  ScratchDir scratch;
  TraceBuilder b;
  b.stack_node(0, 0xA000);
  b.alloc(Api::cudaMalloc, 0, 0x1000, 100, 1, 1000);
  b.free(Api::cudaFree, 0x1000, 1000);
  b.free_failed(Api::cudaFree, 0x1000, 1, 1000);
  b.alloc(Api::cudaMalloc, 0, 0x2000, 100, 1, 1000);
  b.free(Api::cudaFree, 0x2000, 1000);
  b.end(5, 1000);
  replay::ReplayOptions options;
  options.listener = &lifetimes;
  analysis::analyze(write_file(scratch / "refused.trace", b.bytes()), options);
  lifetimes.finish();
  EXPECT_EQ(ended, (std::vector<Ended>{{0x2000, 4000, 5000}, {0x1000, 1000, std::nullopt}}));
}

}  // namespace
}  // namespace gpumemtrace::test
