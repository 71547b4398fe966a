// Neighbours: another preloaded library that wraps cudaMalloc/cudaFree and backs them with the VMM API (as
// torch_memory_saver does). In either preload order, each allocation's memory is in the trace exactly once:
// as the VMM physical memory the neighbour created, mapped where the program's pointer is.
#include <gtest/gtest.h>

#include <set>

#include "tests/support/program_output.h"
#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

constexpr int kNeighbourAllocations = 10;
constexpr uint64_t kGranularity = 2 << 20;  // the simulated device's VMM granularity

std::string neighbour() { return lib_dir() + "/libreliability_vmm_neighbour.so"; }

void expect_each_allocation_once(const TracedRun& run) {
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(printed_value(run.result.out, "done"), static_cast<uint64_t>(kNeighbourAllocations));
  TraceFacts facts = read_trace(run.trace);
  EXPECT_TRUE(facts.complete()) << facts.error;
  std::multiset<uint64_t> sizes, expected;
  for (const auto& a : facts.allocs) {
    EXPECT_EQ(a.api, format::Api::cuMemCreate) << "a second record of the same memory, size " << a.size;
    sizes.insert(a.size);
  }
  for (uint64_t i = 0; i < kNeighbourAllocations; ++i) {
    expected.insert(((i + 1) * (1 << 20) + 1000 + kGranularity - 1) / kGranularity * kGranularity);
  }
  EXPECT_EQ(sizes, expected);
  EXPECT_EQ(facts.maps.size(), static_cast<size_t>(kNeighbourAllocations));
  EXPECT_EQ(facts.unmaps.size(), static_cast<size_t>(kNeighbourAllocations));
  // Every free names memory the trace has: the physical memory's handle, never the mapped address.
  std::multiset<uint64_t> live;
  for (const auto& a : facts.allocs) live.insert(a.address);
  ASSERT_EQ(facts.frees.size(), static_cast<size_t>(kNeighbourAllocations));
  for (const auto& f : facts.frees) {
    auto it = live.find(f.address);
    ASSERT_NE(it, live.end()) << "free of an address never allocated: " << f.address;
    live.erase(it);
  }
}

TEST(Neighbour, VmmWrapperPreloadedAfterTheTracer) {
  expect_each_allocation_once(run_traced("reliability_prog_neighbour", {std::to_string(kNeighbourAllocations)},
                                         {{"LD_PRELOAD", tracer_preload() + ":" + neighbour()}}));
}

TEST(Neighbour, VmmWrapperPreloadedBeforeTheTracer) {
  std::string preload = tracer_preload();
  // The sanitizer runtime, if any, stays first.
  size_t tracer = preload.find(preload_library());
  preload.insert(tracer, neighbour() + ":");
  expect_each_allocation_once(
      run_traced("reliability_prog_neighbour", {std::to_string(kNeighbourAllocations)}, {{"LD_PRELOAD", preload}}));
}

}  // namespace
}  // namespace gpumemtrace::test
