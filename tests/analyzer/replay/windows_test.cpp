// Equal time slices that double when there are too many, and per-window minimum/maximum series.
#include <gtest/gtest.h>

#include "analyzer/replay/time_slices.h"
#include "analyzer/replay/windowed_series.h"
#include "analyzer/report/growth.h"

namespace gpumemtrace::replay {
namespace {

TEST(WindowedSeries, KeepsTheMinimumOfEachWindowAndCarriesTheValueThroughQuietWindows) {
  WindowedSeries<Reduce::Min> series;
  series.set(0, 5);
  series.set(0, 2);
  series.set(0, 7);  // window 0: 0 (its start), then 5, 2, 7
  series.set(3, 9);  // windows 1 and 2 held 7 throughout; window 3 starts at 7
  EXPECT_EQ(series.windows(4), (std::vector<uint64_t>{0, 7, 7, 7, 9}));
}

TEST(WindowedSeries, HalvingMergesPairsWithTheOpenWindow) {
  WindowedSeries<Reduce::Max> series;
  for (uint32_t w = 0; w < 5; ++w) series.set(w, 10 * (w + 1));  // maxima 10, 20, 30, 40, 50
  series.halve(4);  // (10,20) (30,40) and the open 50
  EXPECT_EQ(series.windows(2), (std::vector<uint64_t>{20, 40, 50}));
  series.halve(2);  // (20,40) and the open window merged with nothing
  EXPECT_EQ(series.windows(1), (std::vector<uint64_t>{40, 50}));
}

TEST(TimeSlices, DoubleTheirWidthToStayWithinTwiceTheTarget) {
  TimeSlices slices(4, 1000);
  slices.start(500);
  std::vector<uint32_t> halved_at;
  auto on_halve = [&](uint32_t window) { halved_at.push_back(window); };
  slices.advance(1499, on_halve);
  EXPECT_EQ(slices.window(), 0u);
  slices.advance(1500, on_halve);
  EXPECT_EQ(slices.window(), 1u);
  slices.advance(500 + 7999, on_halve);
  EXPECT_EQ(slices.window(), 7u);
  EXPECT_TRUE(halved_at.empty());
  slices.advance(500 + 8000, on_halve);  // window 8 of 1 µs is too many: 2 µs slices, window 4
  EXPECT_EQ(halved_at, (std::vector<uint32_t>{7}));
  EXPECT_EQ(slices.width_ns(), 2000u);
  EXPECT_EQ(slices.window(), 4u);
  slices.advance(500 + 1'000'000, on_halve);  // far ahead: several doublings at once
  EXPECT_EQ(slices.width_ns(), 128'000u);
  EXPECT_EQ(slices.window(), 7u);
  EXPECT_EQ(halved_at.size(), 7u);
}

TEST(CoarseFloors, TakeTheMinimumOfEachEqualPart) {
  EXPECT_EQ(report::coarse_floors({5, 1, 4, 8, 3, 9}, 3), (std::vector<uint64_t>{1, 4, 3}));
  EXPECT_EQ(report::coarse_floors({5, 1}, 10), (std::vector<uint64_t>{5, 1}));
}

}  // namespace
}  // namespace gpumemtrace::replay
