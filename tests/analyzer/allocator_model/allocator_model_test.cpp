// The allocator model against figures worked out by hand from the rules of CUDACachingAllocator.cpp (2.14.1).
#include <gtest/gtest.h>

#include <vector>

#include "analyzer/allocator_model/allocator.h"
#include "analyzer/allocator_model/recorded_settings.h"
#include "analyzer/allocator_model/settings.h"

namespace gpumemtrace::allocator_model {
namespace {

constexpr uint64_t MiB = kMiB;
using Kind = SegmentEvent::Kind;

// The kinds and sizes of the model's segment events, in order.
std::vector<std::pair<Kind, uint64_t>> segments(const Allocator& model) {
  std::vector<std::pair<Kind, uint64_t>> out;
  for (const SegmentEvent& event : model.events()) out.emplace_back(event.kind, event.size);
  return out;
}

Settings with(std::string_view conf, uint64_t device_memory = uint64_t{80} << 30) {
  Settings settings;
  settings.device_memory = device_memory;
  return parse_alloc_conf(conf, settings);
}

TEST(AllocatorModelSettings, RoundsTo512BytesWithoutDivisions) {
  Settings s;
  EXPECT_EQ(round_size(s, 1), 512u);
  EXPECT_EQ(round_size(s, 512), 512u);
  EXPECT_EQ(round_size(s, 513), 1024u);
  EXPECT_EQ(round_size(s, 5 * MiB + 1), 5 * MiB + 512);
}

TEST(AllocatorModelSettings, RoundsToPowerOfTwoDivisions) {
  Settings four = parse_alloc_conf("roundup_power2_divisions:4");
  EXPECT_EQ(round_size(four, 5 * MiB + 1), 6 * MiB);  // 4 MiB .. 8 MiB in steps of 1 MiB
  EXPECT_EQ(round_size(four, 4 * MiB), 4 * MiB);      // a power of two stays
  EXPECT_EQ(round_size(four, 1200), 1536u);           // not above 512 x 4: to 512 B only
  Settings two = parse_alloc_conf("roundup_power2_divisions:2");
  EXPECT_EQ(round_size(two, 2100), 3072u);  // 2048 .. 4096 in steps of 1024 (512 B would give 2560)
  // Requests under 1 MiB take the 1-2 MiB interval's divisions: 600000 B is between 512 KiB and 1 MiB, in steps of
  // 128 KiB with 4 divisions.
  Settings below = parse_alloc_conf("roundup_power2_divisions:[1:4,2:1]");
  EXPECT_EQ(round_size(below, 600000), 655360u);
  EXPECT_EQ(round_size(below, 2 * MiB + 1), 2 * MiB + 512);
}

TEST(AllocatorModelSettings, ParsesTheListOfDivisionsAsPyTorchDoes) {
  // The first interval's value also covers those below it; ">" covers the intervals from the last one named,
  // that one included (so 256 MiB's 4 becomes 1); 128 MiB is named by none and stays 0.
  Settings s = parse_alloc_conf("roundup_power2_divisions:[64:8,256:4,>:1]");
  std::array<uint64_t, kDivisionIntervals> expected{8, 8, 8, 8, 8, 8, 8, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(s.roundup_power2_divisions, expected);
}

TEST(AllocatorModelSettings, ParsesEveryOptionAndRefusesWhatPyTorchRefuses) {
  Settings s = parse_alloc_conf(
      " expandable_segments:True, max_split_size_mb:256,max_non_split_rounding_mb:64,"
      "garbage_collection_threshold:0.6,large_segment_size_mb:32,release_lock_on_cudamalloc:False");
  EXPECT_TRUE(s.expandable_segments);
  EXPECT_EQ(s.max_split_size, 256 * MiB);
  EXPECT_EQ(s.max_non_split_rounding_size, 64 * MiB);
  EXPECT_DOUBLE_EQ(s.garbage_collection_threshold, 0.6);
  EXPECT_EQ(s.large_segment_size, 32 * MiB);
  EXPECT_THROW(parse_alloc_conf("max_split_size_mb:19"), SettingsError);
  EXPECT_THROW(parse_alloc_conf("max_non_split_rounding_mb:10"), SettingsError);
  EXPECT_THROW(parse_alloc_conf("garbage_collection_threshold:1.0"), SettingsError);
  EXPECT_THROW(parse_alloc_conf("roundup_power2_divisions:3"), SettingsError);
  EXPECT_THROW(parse_alloc_conf("expandable_segments:yes"), SettingsError);
  EXPECT_THROW(parse_alloc_conf("max_split_size:256"), SettingsError);
  EXPECT_THROW(parse_alloc_conf("backend:cudaMallocAsync"), SettingsError);
  EXPECT_THROW(parse_alloc_conf("max_split_size_mb"), SettingsError);
}

// The snapshot's dict wins over the string (it is what the allocator ran with); the string gives what the dict
// leaves out.
TEST(AllocatorModelSettings, RecordedSettingsTakeTheDictOverTheString) {
  pytorch::AllocatorSettings recorded;
  recorded.alloc_conf = "max_split_size_mb:256,large_segment_size_mb:40,max_non_split_rounding_mb:64";
  recorded.max_split_size = 512 * MiB;
  recorded.garbage_collection_threshold = 0.6;
  recorded.expandable_segments = true;
  recorded.roundup_power2_divisions = std::array<uint64_t, 16>{8, 8, 4};
  Settings base;
  base.device_memory = 8 * kMiB * 1024;
  base.per_process_memory_fraction = 0.5;
  Settings s = recorded_settings(recorded, base);
  EXPECT_EQ(s.max_split_size, 512 * MiB);
  EXPECT_EQ(s.large_segment_size, 40 * MiB);
  EXPECT_EQ(s.max_non_split_rounding_size, 64 * MiB);
  EXPECT_EQ(s.garbage_collection_threshold, 0.6);
  EXPECT_TRUE(s.expandable_segments);
  EXPECT_EQ(s.divisions_for(3 * MiB), 8u);
  EXPECT_EQ(s.divisions_for(5 * MiB), 4u);
  EXPECT_EQ(s.divisions_for(9 * MiB), 0u);
  EXPECT_EQ(s.per_process_memory_fraction, 0.5);
  EXPECT_EQ(s.device_memory, 8 * kMiB * 1024);
  recorded.alloc_conf = "backend:cudaMallocAsync";
  EXPECT_THROW(recorded_settings(recorded), SettingsError);
}

TEST(AllocatorModelSettings, SegmentSizes) {
  Settings s;
  EXPECT_EQ(segment_size(s, 1 * MiB), 2 * MiB);
  EXPECT_EQ(segment_size(s, 1 * MiB + 512), 20 * MiB);
  EXPECT_EQ(segment_size(s, 10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(segment_size(s, 10 * MiB), 10 * MiB);
  EXPECT_EQ(segment_size(s, 11 * MiB), 12 * MiB);
}

TEST(AllocatorModel, SmallRequestsShareATwoMiBSegmentPerStream) {
  Allocator model(with(""));
  auto a = model.malloc(1000, 1);
  auto b = model.malloc(1000, 1);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(model.address(*b), model.address(*a) + 1024);
  EXPECT_EQ(segments(model), (std::vector<std::pair<Kind, uint64_t>>{{Kind::Alloc, 2 * MiB}}));
  EXPECT_EQ(model.counters().allocated, 2048u);
  model.free(*a);
  ASSERT_TRUE(model.malloc(1000, 2));  // another stream never takes a's block: a segment of its own
  EXPECT_EQ(model.counters().reserved, 4 * MiB);
  EXPECT_EQ(model.counters().device_allocs, 2u);
}

TEST(AllocatorModel, LargeRequestsSplitTwentyMiBSegmentsButKeepARemainderOfOneMiB) {
  Allocator model(with(""));
  ASSERT_TRUE(model.malloc(3 * MiB, 0));  // a 20 MiB segment, 17 MiB split off
  ASSERT_TRUE(model.malloc(5 * MiB, 0));  // from the remainder
  EXPECT_EQ(model.counters().reserved, 20 * MiB);
  EXPECT_EQ(model.counters().allocated, 8 * MiB);
  EXPECT_EQ(model.largest_free_block(), 12 * MiB);
  ASSERT_TRUE(model.malloc(25 * MiB, 0));  // a 26 MiB segment: its 1 MiB remainder is not over 1 MiB, not split
  EXPECT_EQ(model.counters().allocated, 34 * MiB);
  EXPECT_EQ(segments(model), (std::vector<std::pair<Kind, uint64_t>>{{Kind::Alloc, 20 * MiB}, {Kind::Alloc, 26 * MiB}}));
}

TEST(AllocatorModel, OversizeBlocksServeOnlyOversizeRequestsWithinTheRoundingLimit) {
  Allocator model(with("max_split_size_mb:20"));
  auto big = model.malloc(25 * MiB, 0);  // 26 MiB, oversize
  model.free(*big);
  ASSERT_TRUE(model.malloc(12 * MiB, 0));  // below max_split: not the oversize block, a 12 MiB segment
  auto reuse = model.malloc(24 * MiB, 0);  // 26 < 24 + 20: the cached 26 MiB block, whole
  ASSERT_TRUE(reuse);
  EXPECT_EQ(model.size(*reuse), 26 * MiB);
  model.free(*reuse);
  ASSERT_TRUE(model.malloc(5 * MiB, 0));  // a new 20 MiB segment, not the oversize block
  EXPECT_EQ(segments(model), (std::vector<std::pair<Kind, uint64_t>>{
                                 {Kind::Alloc, 26 * MiB}, {Kind::Alloc, 12 * MiB}, {Kind::Alloc, 20 * MiB}}));
  Allocator limit(with("max_split_size_mb:20"));
  limit.free(*limit.malloc(44 * MiB, 0));
  ASSERT_TRUE(limit.malloc(22 * MiB, 0));  // 44 >= 22 + 20: too much larger, a 22 MiB segment
  EXPECT_EQ(segments(limit), (std::vector<std::pair<Kind, uint64_t>>{{Kind::Alloc, 44 * MiB}, {Kind::Alloc, 22 * MiB}}));
}

// The largest cached block over every stream and both pools, not only the last stream's.
TEST(AllocatorModel, TheLargestFreeBlockIsTheLargestOfEveryStream) {
  Allocator model(with(""));
  ASSERT_TRUE(model.malloc(3 * MiB, 1));   // a 20 MiB segment: 17 MiB stay free on stream 1
  std::optional<BlockId> twelve = model.malloc(12 * MiB, 2);  // a segment of its own on stream 2
  ASSERT_TRUE(twelve);
  model.free(*twelve);
  ASSERT_TRUE(model.malloc(900 * 1024, 3));  // the small pool: 2 MiB - 900 KiB free on stream 3
  EXPECT_EQ(model.largest_free_block(), 17 * MiB);
}

TEST(AllocatorModel, AMissReleasesTheCacheAndRetriesBeforeRunningOutOfMemory) {
  Allocator model(with("", 64 * MiB));
  model.free(*model.malloc(30 * MiB, 0));
  auto forty = model.malloc(40 * MiB, 0);  // 30 + 40 > 64: the cached 30 MiB go back, then it fits
  ASSERT_TRUE(forty);
  EXPECT_EQ(model.counters().alloc_retries, 1u);
  EXPECT_FALSE(model.malloc(30 * MiB, 0));  // 40 live + 30 > 64, nothing cached: out of memory
  EXPECT_EQ(model.counters().out_of_memory, std::vector<uint64_t>{2});
  EXPECT_EQ(segments(model), (std::vector<std::pair<Kind, uint64_t>>{
                                 {Kind::Alloc, 30 * MiB}, {Kind::Free, 30 * MiB}, {Kind::Alloc, 40 * MiB}}));
  EXPECT_EQ(model.counters().peak_reserved, 40 * MiB);

  // A cached block that is part of a split segment cannot be released.
  Allocator split(with("", 40 * MiB));
  auto a = split.malloc(3 * MiB, 0);
  ASSERT_TRUE(split.malloc(3 * MiB, 0));
  split.free(*a);
  EXPECT_FALSE(split.malloc(30 * MiB, 0));
  EXPECT_EQ(split.counters().reserved, 20 * MiB);
  EXPECT_EQ(segments(split), (std::vector<std::pair<Kind, uint64_t>>{{Kind::Alloc, 20 * MiB}}));
}

TEST(AllocatorModel, WithMaxSplitSizeTheLargestOversizeBlocksGoFirst) {
  Allocator model(with("max_split_size_mb:20", 100 * MiB));
  auto a = model.malloc(30 * MiB, 0), b = model.malloc(25 * MiB, 0), c = model.malloc(22 * MiB, 0);
  model.free(*a);
  model.free(*b);
  model.free(*c);
  // 78 MiB cached; 78 + 48 > 100. No single block of 48 MiB: the largest, 30 then 26, until 56 >= 48 are released.
  ASSERT_TRUE(model.malloc(48 * MiB, 0));
  EXPECT_EQ(model.counters().alloc_retries, 0u);
  EXPECT_EQ(segments(model), (std::vector<std::pair<Kind, uint64_t>>{{Kind::Alloc, 30 * MiB},
                                                                     {Kind::Alloc, 26 * MiB},
                                                                     {Kind::Alloc, 22 * MiB},
                                                                     {Kind::Free, 30 * MiB},
                                                                     {Kind::Free, 26 * MiB},
                                                                     {Kind::Alloc, 48 * MiB}}));
  EXPECT_EQ(model.counters().reserved, 70 * MiB);
}

TEST(AllocatorModel, ExpandableSegmentsMapPagesAndUnmapThemOnEmptyCache) {
  Allocator model(with("expandable_segments:True", 1024 * MiB));
  auto a = model.malloc(3 * MiB, 0);  // one 20 MiB page; 17 MiB split off
  auto b = model.malloc(30 * MiB, 0);  // the 17 MiB and one more page: 37 MiB, 7 MiB split off
  ASSERT_TRUE(a && b);
  EXPECT_EQ(model.address(*b), model.address(*a) + 3 * MiB);
  EXPECT_EQ(model.counters().reserved, 40 * MiB);
  EXPECT_EQ(model.counters().allocated, 33 * MiB);
  auto small = model.malloc(1000, 0);  // the small pool's segment: a 2 MiB page
  ASSERT_TRUE(small);
  model.free(*a);
  model.free(*b);
  model.empty_cache();  // the large segment is free from end to end: both pages go
  EXPECT_EQ(segments(model), (std::vector<std::pair<Kind, uint64_t>>{
                                 {Kind::Map, 20 * MiB}, {Kind::Map, 20 * MiB}, {Kind::Map, 2 * MiB},
                                 {Kind::Unmap, 40 * MiB}}));
  EXPECT_EQ(model.counters().reserved, 2 * MiB);
  auto again = model.malloc(5 * MiB, 0);  // the address space went back too: a new segment, one page
  ASSERT_TRUE(again);
  EXPECT_EQ(model.counters().reserved, 22 * MiB);
}

TEST(AllocatorModel, GarbageCollectionReleasesTheOlderCachedBlocksAboveTheThreshold) {
  Settings settings = with("garbage_collection_threshold:0.5", 100 * MiB);
  settings.per_process_memory_fraction = 0.5;  // 50 MiB allowed; collection above 25 MiB
  Allocator model(settings);
  model.free(*model.malloc(12 * MiB, 0));  // cached after search 1
  model.free(*model.malloc(14 * MiB, 0));  // cached after search 2
  // Search 3 misses; 26 MiB > 25: ages 2 and 1, average 1.5: the 12 MiB block goes, which is enough.
  ASSERT_TRUE(model.malloc(16 * MiB, 0));
  EXPECT_EQ(segments(model), (std::vector<std::pair<Kind, uint64_t>>{
                                 {Kind::Alloc, 12 * MiB}, {Kind::Alloc, 14 * MiB}, {Kind::Free, 12 * MiB},
                                 {Kind::Alloc, 16 * MiB}}));
  // Search 4 misses; 30 MiB > 25: the 14 MiB block, age 2 and the only one, goes before the new segment.
  ASSERT_TRUE(model.malloc(22 * MiB, 0));
  EXPECT_EQ(model.counters().reserved, 38 * MiB);
  EXPECT_EQ(model.events().size(), 6u);
  EXPECT_EQ(model.events()[4].kind, Kind::Free);
  EXPECT_EQ(model.events()[4].size, 14 * MiB);

  Allocator without_fraction(with("garbage_collection_threshold:0.5", 100 * MiB));  // no fraction: no collection
  without_fraction.free(*without_fraction.malloc(12 * MiB, 0));
  without_fraction.free(*without_fraction.malloc(14 * MiB, 0));
  ASSERT_TRUE(without_fraction.malloc(16 * MiB, 0));
  EXPECT_EQ(without_fraction.counters().reserved, 42 * MiB);
}

TEST(AllocatorModel, TheMemoryFractionRefusesASegmentBeforeTheDeviceIsAsked) {
  Settings settings = with("", 100 * MiB);
  settings.per_process_memory_fraction = 0.5;  // 50 MiB allowed, the device has room for 70
  Allocator model(settings);
  model.free(*model.malloc(30 * MiB, 0));
  ASSERT_TRUE(model.malloc(40 * MiB, 0));  // 30 + 40 > 50: the cached 30 MiB go back, then it fits
  EXPECT_EQ(model.counters().alloc_retries, 1u);
  EXPECT_FALSE(model.malloc(12 * MiB, 0));  // 40 + 12 > 50
  EXPECT_EQ(model.counters().out_of_memory, std::vector<uint64_t>{2});
}

TEST(AllocatorModel, ABlockFreedLaterWaitsForItsEventsOrASynchronization) {
  Allocator model(with(""));
  auto a = model.malloc(3 * MiB, 1);
  model.free_later(*a);
  EXPECT_EQ(model.counters().allocated, 0u);
  auto b = model.malloc(3 * MiB, 1);  // not a's block, still in use: from the remainder after it
  EXPECT_EQ(model.address(*b), model.address(*a) + 3 * MiB);
  model.complete(*a);
  EXPECT_EQ(model.largest_free_block(), 14 * MiB);

  Allocator tight(with("", 40 * MiB));
  auto c = tight.malloc(30 * MiB, 1);
  tight.free_later(*c);
  ASSERT_TRUE(tight.malloc(30 * MiB, 1));  // 60 > 40: the retry synchronizes, c is freed and released
  tight.complete(*c);                        // already done
  EXPECT_EQ(segments(tight), (std::vector<std::pair<Kind, uint64_t>>{
                                 {Kind::Alloc, 30 * MiB}, {Kind::Free, 30 * MiB}, {Kind::Alloc, 30 * MiB}}));
}

TEST(AllocatorModel, MallocWouldReleaseOnlyWhenNoCachedBlockAndNoRoomForASegment) {
  Allocator model(with("", 64 * MiB));
  model.free(*model.malloc(30 * MiB, 0));
  EXPECT_FALSE(model.malloc_would_release(30 * MiB, 0));  // the cached block
  EXPECT_FALSE(model.malloc_would_release(34 * MiB, 0));  // 30 + 34 = 64 fits
  EXPECT_TRUE(model.malloc_would_release(36 * MiB, 0));
}

}  // namespace
}  // namespace gpumemtrace::allocator_model
