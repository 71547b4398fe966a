// Sub-allocator heaps in the replay and the reports (analyzer/replay/heaps.h, the fragmentation verdict and
// model), on a hand-built trace: a 2 MiB segment whose heap has blocks with and without rounding, then a
// request that the heap's free memory would hold in total but no free block could.
#include <gtest/gtest.h>

#include "analyzer/report/growth.h"
#include "analyzer/report/oom_diagnosis.h"
#include "analyzer/report/oom_explanation.h"
#include "common/size_units.h"
#include "tests/analyzer/report_helpers.h"
#include "tests/support/subprocess.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace gpumemtrace::test {
namespace {

using format::Api;
constexpr uint64_t kBase = 0x10000000;

// Heap 1 "small" (device not said: it is the segment's, device 0) in [kBase, kBase + 2 MiB):
//   [0, 1024)            1000 asked, 1024 reserved
//   [1024, 4096)         3000 asked, 3072 reserved, freed at 40 us
//   [4096, 4608)         512 asked, reserved not said
//   [1 MiB, 1.5 MiB)     512 KiB asked and reserved
// Heap 2 "gone" on device 0 is destroyed before the failure. Then `requested` fails with 1 MiB free of 4 MiB.
TraceBuilder heap_trace(uint64_t requested) {
  TraceBuilder b;
  b.thread_new(1, 1, "main").stack_node(0, 0xA000).stack_node(0, 0xB000);
  b.alloc(Api::cudaMalloc, 0, kBase, 2 * kMiB, 1, 1000);
  b.event(trace::HeapCreate{{}, 1, trace::kNoDevice, kBase, 2 * kMiB, "small"}, 1000);
  b.event(trace::SubAlloc{{}, 1, kBase, 1000, 1024, 2}, 1000);
  b.event(trace::SubAlloc{{}, 1, kBase + 1024, 3000, 3072, 2}, 1000);
  b.event(trace::SubAlloc{{}, 1, kBase + 4096, 512, 0, 2}, 1000);
  b.event(trace::SubAlloc{{}, 1, kBase + kMiB, 512 * 1024, 512 * 1024, 2}, 1000);  // the peak: 528800
  b.event(trace::HeapCreate{{}, 2, 0, 0x20000000, kMiB, "gone"}, 1000);
  b.event(trace::SubAlloc{{}, 2, 0x20000000, 4096, 0, 2}, 1000);
  b.event(trace::HeapDestroy{{}, 2}, 1000);
  b.event(trace::SubFree{{}, 1, kBase + 1024}, 33000);
  b.event(trace::SubFree{{}, 1, kBase + 99}, 1000);  // no such block: counted
  b.alloc_failed(Api::cudaMalloc, 0, requested, 1, 2, 1000, 1 * kMiB, 4 * kMiB);
  b.end(12, 1000);
  return b;
}

class Heaps : public testing::Test {
 protected:
  const replay::Replay& analyze(uint64_t requested) {
    analysis_ = analyze_built(scratch_, heap_trace(requested));
    return *analysis_.replay;
  }
  report::OomDiagnosis diagnose(uint64_t requested) {
    const replay::Replay& r = analyze(requested);
    return report::diagnose(r, r.failures().at(0), report::find_growth(r));
  }
  ScratchDir scratch_;
  analysis::Analysis analysis_;
};

TEST_F(Heaps, FiguresOfALiveHeap) {
  const replay::Replay& r = analyze(1200000);
  ASSERT_EQ(r.heaps().heaps().size(), 2u);
  const replay::Heap& heap = r.heaps().heaps()[0];
  EXPECT_EQ(heap.name, "small");
  EXPECT_EQ(heap.device, 0);  // from the allocation the heap starts at
  EXPECT_EQ(heap.peak_allocated_bytes, 528800u);
  EXPECT_EQ(heap.peak_ns, 6000u);
  replay::HeapFigures f = heap.figures();
  EXPECT_EQ(f.reserved_bytes, 2 * kMiB);
  EXPECT_EQ(f.allocated_bytes, 525800u);  // 1000 + 512 + 524288
  EXPECT_EQ(f.blocks, 3u);
  EXPECT_EQ(f.internal_bytes, 24u);  // 1024 - 1000; the 512-byte block said nothing, the large one is exact
  EXPECT_EQ(f.external_bytes, 1571328u);  // 3072 + (1 MiB - 4608) + 512 KiB
  EXPECT_EQ(f.largest_free_bytes, 1043968u);  // 1 MiB - 4608
  EXPECT_NEAR(f.fragmentation(), 1.0 - 1043968.0 / 1571328.0, 1e-12);
  EXPECT_EQ(r.heaps().inconsistencies().unknown_blocks, 1u);
  EXPECT_EQ(r.heaps().inconsistencies().unknown_heaps, 0u);

  const replay::Heap& gone = r.heaps().heaps()[1];
  EXPECT_TRUE(gone.destroyed);
  EXPECT_EQ(gone.figures().allocated_bytes, 0u);
}

TEST_F(Heaps, AtTheFailureOnlyLiveHeapsOfTheDeviceCount) {
  const replay::Replay& r = analyze(1200000);
  const replay::HeapsAtFailure& h = r.failures().at(0).heaps;
  EXPECT_EQ(h.heaps, 1u);
  EXPECT_EQ(h.reserved_bytes, 2 * kMiB);
  EXPECT_EQ(h.allocated_bytes, 525800u);
  EXPECT_EQ(h.free_bytes, 1571328u);
  EXPECT_EQ(h.largest_free_bytes, 1043968u);
}

TEST_F(Heaps, ARequestThatFitsTheFreeTotalButNoBlockIsFragmentation) {
  report::OomDiagnosis d = diagnose(1200000);  // <= 1 MiB free + 1571328 cached, > 1043968
  EXPECT_EQ(d.verdict, report::Verdict::Fragmentation);
  EXPECT_EQ(report::verdict_name(d.verdict), "fragmentation");
  EXPECT_EQ(d.heap_free_bytes, 1571328u);
  EXPECT_EQ(d.heap_largest_free_bytes, 1043968u);
  report::OomExplanation e = report::explain(analysis_.replay->failures().at(0), d, "");
  EXPECT_EQ(e.finding,
            "the allocator's heaps had 1.50 MiB free, and with it the request would have fit (1.00 MiB free + 1.50 "
            "MiB cached >= 1.14 MiB), but their largest free block was 1020 KiB: the free memory is in pieces");
}

TEST_F(Heaps, ARequestThatFitsTheLargestBlockIsNotFragmentation) {
  EXPECT_NE(diagnose(1043968).verdict, report::Verdict::Fragmentation);
}

TEST_F(Heaps, ARequestLargerThanFreePlusCachedIsNotFragmentation) {
  EXPECT_NE(diagnose(kMiB + 1571328 + 1).verdict, report::Verdict::Fragmentation);
}

// Of many heaps the report lists ten; the live ones come before those destroyed, which hold nothing any more,
// even when no live one has free memory (a long PyTorch history has a segment for every one it ever freed).
TEST_F(Heaps, TheListedHeapsAreTheLiveOnesBeforeTheDestroyed) {
  TraceBuilder b;
  b.thread_new(1, 1, "main").stack_node(0, 0xA000);
  b.alloc(Api::cudaMalloc, 0, 0x40000000, 12 * kMiB, 1, 1000);
  b.alloc(Api::cudaMalloc, 0, kBase, 4 * kMiB, 1, 1000);
  for (uint64_t i = 0; i < 12; ++i) {
    uint64_t base = 0x40000000 + i * kMiB;
    b.event(trace::HeapCreate{{}, 100 + i, 0, base, kMiB, "gone"}, 1000);
    b.event(trace::SubAlloc{{}, 100 + i, base, kMiB, kMiB, 1}, 1000);
    b.event(trace::HeapDestroy{{}, 100 + i}, 1000);
  }
  b.event(trace::HeapCreate{{}, 1, 0, kBase, 2 * kMiB, "full"}, 1000);
  b.event(trace::SubAlloc{{}, 1, kBase, 2 * kMiB, 2 * kMiB, 1}, 1000);
  b.event(trace::HeapCreate{{}, 2, 0, kBase + 2 * kMiB, 2 * kMiB, "half"}, 1000);
  b.event(trace::SubAlloc{{}, 2, kBase + 2 * kMiB, kMiB, kMiB, 1}, 1000);
  b.end(42, 1000);
  std::string path = write_file(scratch_ / "many.trace", b.bytes());
  ProcessResult text = run_gpumemtrace({"fragmentation", path});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  size_t listed = text.out.find("    the 10 heaps with the most free memory:\n");
  ASSERT_NE(listed, std::string::npos) << text.out;
  std::string list = text.out.substr(listed);
  size_t half = list.find("    heap 2 \"half\": 2.00 MiB reserved"), full = list.find("    heap 1 \"full\": 2.00 MiB reserved");
  size_t destroyed = list.find("(destroyed)");
  ASSERT_NE(half, std::string::npos) << text.out;
  ASSERT_NE(full, std::string::npos) << text.out;
  EXPECT_LT(half, full);
  EXPECT_LT(full, destroyed);
  EXPECT_NE(list.find("... and 4 more heaps"), std::string::npos) << text.out;
}

TEST_F(Heaps, TheFragmentationReportShowsTheHeaps) {
  std::string path = write_file(scratch_ / "heaps.trace", heap_trace(1200000).bytes());
  ProcessResult text = run_gpumemtrace({"fragmentation", path});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("    heap 1 \"small\": 2.00 MiB reserved, 513 KiB allocated in 3 blocks (peak 516 KiB at 6 µs)\n"
                          "      internal 24 B, external 1.50 MiB, largest free block 1020 KiB, fragmentation 0.34\n"
                          "      allocated over time (the most in each slice of "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("    heap 2 \"gone\" (destroyed): 1.00 MiB reserved, 0 B allocated in 0 blocks (peak 4.00 KiB "
                          "at 8 µs)\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("in the largest free block of a heap (1020 KiB of 1.50 MiB free): no\n"), std::string::npos)
      << text.out;

  ProcessResult json = run_gpumemtrace({"fragmentation", "--json", path});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::ordered_json device = nlohmann::ordered_json::parse(json.out)["devices"].at(0);
  const auto& heap = device["heaps"].at(0);
  EXPECT_EQ(heap["heap"], 1);
  EXPECT_EQ(heap["name"], "small");
  EXPECT_EQ(heap["reserved_bytes"], 2 * kMiB);
  EXPECT_EQ(heap["allocated_bytes"], 525800);
  EXPECT_EQ(heap["blocks"], 3);
  EXPECT_EQ(heap["internal_bytes"], 24);
  EXPECT_EQ(heap["external_bytes"], 1571328);
  EXPECT_EQ(heap["largest_free_block_bytes"], 1043968);
  EXPECT_EQ(heap["peak_allocated_bytes"], 528800);
  // Over time: nothing before the heap, the peak of 528800 in some slice, 525800 at the end.
  std::vector<uint64_t> series = heap["allocated_series_bytes"];
  ASSERT_FALSE(series.empty());
  EXPECT_EQ(series.front(), 0u);
  EXPECT_EQ(*std::max_element(series.begin(), series.end()), 528800u);
  EXPECT_EQ(series.back(), 525800u);
  EXPECT_EQ(device["heaps"].at(1)["destroyed"], true);
  const auto& failure = device["failures"].at(0);
  EXPECT_EQ(failure["heap_free_bytes"], 1571328);
  EXPECT_EQ(failure["largest_free_block_bytes"], 1043968);
  EXPECT_EQ(failure["fits_largest_free_block"], false);
}

// Block names (SubName): a name stays with its live block until the block is named again or freed; a new
// block at the same address has none; a name for no live block is counted.
TEST(HeapBlockNames, StayWithTheLiveBlock) {
  TraceBuilder b;
  b.thread_new(1, 1, "main").stack_node(0, 0xA000);
  b.alloc(Api::cudaMalloc, 0, kBase, 2 * kMiB, 1, 1000);
  b.event(trace::HeapCreate{{}, 1, trace::kNoDevice, kBase, 2 * kMiB, "pool"}, 1000);
  b.event(trace::SubAlloc{{}, 1, kBase, 1024, 0, 1}, 1000);
  b.event(trace::SubAlloc{{}, 1, kBase + 1024, 512, 0, 1}, 1000);
  b.event(trace::SubName{{}, 1, kBase, "activations"}, 1000);
  b.event(trace::SubName{{}, 1, kBase + 1024, "bias"}, 1000);
  b.event(trace::SubName{{}, 1, kBase + 1024, "bias gradient"}, 1000);
  b.event(trace::SubName{{}, 1, kBase + 4096, "nothing there"}, 1000);
  b.event(trace::SubAlloc{{}, 0, 0x30000000, 64, 0, 1}, 1000);
  b.event(trace::SubName{{}, 0, 0x30000000, "loose"}, 1000);
  b.event(trace::SubAlloc{{}, 1, kBase + 2048, 512, 0, 1}, 1000);
  b.event(trace::SubName{{}, 1, kBase + 2048, "freed"}, 1000);
  b.event(trace::SubFree{{}, 1, kBase + 2048}, 1000);
  b.event(trace::SubAlloc{{}, 1, kBase + 2048, 512, 0, 1}, 1000);
  b.end(14, 1000);
  ScratchDir scratch;
  analysis::Analysis analysis = analyze_built(scratch, b);
  const replay::HeapTracker& heaps = analysis.replay->heaps();
  ASSERT_NE(heaps.block(1, kBase), nullptr);
  EXPECT_EQ(heaps.block(1, kBase)->name, "activations");
  ASSERT_NE(heaps.block(1, kBase + 1024), nullptr);
  EXPECT_EQ(heaps.block(1, kBase + 1024)->name, "bias gradient");
  ASSERT_NE(heaps.block(1, kBase + 2048), nullptr);
  EXPECT_EQ(heaps.block(1, kBase + 2048)->name, "");
  ASSERT_NE(heaps.block(0, 0x30000000), nullptr);
  EXPECT_EQ(heaps.block(0, 0x30000000)->name, "loose");
  EXPECT_EQ(heaps.block(1, kBase + 4096), nullptr);
  EXPECT_EQ(heaps.inconsistencies().unknown_blocks, 1u);
}

// Heap `id` on device 0 at `base`, 1 MiB, that held `peak` bytes and was destroyed.
void destroyed_heap(replay::HeapTracker& heaps, uint64_t id, uint64_t base, uint64_t peak) {
  heaps.on(trace::HeapCreate{{}, id, 0, base, kMiB, "gone"});
  heaps.on(trace::SubAlloc{{}, id, base, peak, 0, 1});
  heaps.on(trace::HeapDestroy{{}, id});
}

std::vector<uint64_t> peaks_kept(const replay::HeapTracker& heaps) {
  std::vector<uint64_t> peaks;
  for (const replay::Heap& heap : heaps.heaps()) peaks.push_back(heap.peak_allocated_bytes);
  return peaks;
}

// Of a device's destroyed heaps the tracker keeps those with the highest peaks, in the order they were
// created, and counts the others; live heaps are always kept, and every heap created keeps its place.
TEST(HeapFolding, KeepsTheDestroyedHeapsWithTheHighestPeaksAndCountsTheRest) {
  replay::HeapTracker heaps(3);
  const uint64_t peaks[] = {5, 9, 1, 7, 10, 2, 8, 3, 6, 4};
  heaps.on(trace::HeapCreate{{}, 1, 0, kBase, 2 * kMiB, "live"});
  heaps.on(trace::SubAlloc{{}, 1, kBase, 100, 0, 1});
  for (uint64_t i = 0; i < 10; ++i) destroyed_heap(heaps, 100 + i, 0x40000000 + i * kMiB, peaks[i] * 1024);
  heaps.on(trace::HeapCreate{{}, 2, 1, 0x80000000, kMiB, "other device"}, trace::MemoryKind::Managed);
  heaps.on(trace::HeapDestroy{{}, 2});
  heaps.finish();
  EXPECT_EQ(peaks_kept(heaps), (std::vector<uint64_t>{100, 9 * 1024, 10 * 1024, 8 * 1024, 0}));
  replay::FoldedHeaps folded = heaps.folded(0);
  EXPECT_EQ(folded.heaps, 7u);
  EXPECT_EQ(folded.reserved_bytes, 7 * kMiB);
  EXPECT_EQ(folded.peak_allocated_bytes, 7 * 1024u);
  EXPECT_EQ(heaps.folded(1).heaps, 0u) << "one destroyed heap on device 1: kept";
  EXPECT_EQ(heaps.created(), 12u);
  EXPECT_EQ(heaps.places()[0].device, 0);
  EXPECT_EQ(heaps.places()[10].device, 0);
  EXPECT_EQ(heaps.places()[11].device, 1);
  EXPECT_EQ(heaps.places()[11].kind, trace::MemoryKind::Managed);
  EXPECT_EQ(heaps.heap(100), nullptr) << "folded";
  ASSERT_NE(heaps.heap(101), nullptr);
  EXPECT_TRUE(heaps.heap(101)->destroyed);
  // A folded heap's id names a new heap when created again.
  heaps.on(trace::HeapCreate{{}, 100, 0, 0x40000000, kMiB, "again"});
  ASSERT_NE(heaps.heap(100), nullptr);
  EXPECT_EQ(heaps.heap(100)->name, "again");
  EXPECT_EQ(heaps.inconsistencies().unknown_heaps, 0u);
}

// Folding happens while the replay goes on, so that memory follows the heaps alive; the result is the same
// as folding once at the end.
TEST(HeapFolding, ALongHistoryIsFoldedAsItGoes) {
  replay::HeapTracker heaps(100);
  size_t most_held = 0;
  for (uint64_t i = 0; i < 50000; ++i) {
    destroyed_heap(heaps, 1000 + i, 0x40000000 + i * kMiB, (i * 7919) % 50000 + 1);
    most_held = std::max(most_held, heaps.heaps().size());
  }
  EXPECT_LE(most_held, 16384u);
  heaps.finish();
  std::vector<uint64_t> kept = peaks_kept(heaps);
  ASSERT_EQ(kept.size(), 100u);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept.front(), 49901u);
  EXPECT_EQ(kept.back(), 50000u);
  EXPECT_EQ(heaps.folded(0).heaps, 49900u);
  EXPECT_EQ(heaps.folded(0).peak_allocated_bytes, 49900u);
  EXPECT_EQ(heaps.created(), 50000u);
}

// The reports list what is kept and say what was only counted; an export keeps every heap.
TEST(HeapFolding, TheReportsSayWhatWasOnlyCountedAndExportsKeepEveryHeap) {
  TraceBuilder b;
  b.thread_new(1, 1, "main").stack_node(0, 0xA000);
  b.alloc(Api::cudaMalloc, 0, 0x40000000, 103 * kMiB, 1, 1000);
  for (uint64_t i = 0; i < 103; ++i) {
    uint64_t base = 0x40000000 + i * kMiB;
    b.event(trace::HeapCreate{{}, 100 + i, 0, base, kMiB, "h" + std::to_string(i)}, 1000);
    b.event(trace::SubAlloc{{}, 100 + i, base, (i + 1) * 1024, 0, 1}, 1000);
    b.event(trace::HeapDestroy{{}, 100 + i}, 1000);
  }
  b.end(3 * 103 + 1, 1000);
  ScratchDir scratch;
  std::string path = write_file(scratch / "many.trace", b.bytes());
  ProcessResult text = run_gpumemtrace({"fragmentation", path});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("    ... and 93 more heaps: 90 that --json lists, and\n"
                          "    3 destroyed heaps only counted (3.00 MiB reserved in all, at most 3.00 KiB allocated in any)\n"),
            std::string::npos)
      << text.out;
  ProcessResult json = run_gpumemtrace({"fragmentation", "--json", path});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json device = nlohmann::json::parse(json.out)["devices"].at(0);
  EXPECT_EQ(device["heaps"].size(), 100u);
  EXPECT_EQ(device["heaps"].at(0)["name"], "h3");
  EXPECT_EQ(device["unlisted_destroyed_heaps"],
            (nlohmann::json{{"heaps", 3}, {"reserved_bytes", 3 * kMiB}, {"peak_allocated_bytes", 3 * 1024}}));
  std::string exported = scratch / "many.json";
  ProcessResult perfetto = run_gpumemtrace({"export", "--format", "perfetto", "-o", exported, path});
  ASSERT_EQ(perfetto.exit_code, 0) << perfetto.err;
  std::set<std::string> tracks;
  nlohmann::json trace = nlohmann::json::parse(read_file(exported));
  for (const auto& event : trace["traceEvents"])
    if (event.value("ph", "") == "C" && event.value("name", "").rfind("heap ", 0) == 0) tracks.insert(event["name"]);
  EXPECT_EQ(tracks.size(), 103u);
}

}  // namespace
}  // namespace gpumemtrace::test
