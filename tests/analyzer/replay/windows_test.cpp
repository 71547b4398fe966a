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

// Every window kept, as a plain list: what the series must give back whatever it leaves unstored.
struct EveryWindow {
  std::vector<uint64_t> windows{0};  // the last is open
  uint64_t current = 0;
  void set(uint32_t window, uint64_t value) {
    while (windows.size() <= window) windows.push_back(current);
    current = value;
    windows.back() = std::max(windows.back(), value);
  }
  void halve(uint32_t window) {
    while (windows.size() <= window) windows.push_back(current);
    std::vector<uint64_t> merged;
    for (size_t i = 0; i < windows.size(); i += 2)
      merged.push_back(i + 1 < windows.size() ? std::max(windows[i], windows[i + 1]) : windows[i]);
    windows = merged;
  }
};

TEST(WindowedSeries, GivesEveryWindowWhileStoringOnlyItsChanges) {
  uint64_t state = 12345;
  auto next = [&] { return (state = state * 6364136223846793005u + 1442695040888963407u) >> 33; };
  for (int trial = 0; trial < 200; ++trial) {
    WindowedSeries<Reduce::Max> series;
    EveryWindow model;
    uint32_t window = static_cast<uint32_t>(next() % 40);
    for (int op = 0; op < 60; ++op) {
      window += static_cast<uint32_t>(next() % 8 == 0 ? next() % 60 : next() % 4);
      if (next() % 5 == 0) {
        series.halve(window);
        model.halve(window);
        window /= 2;
      } else {
        uint64_t value = next() % 3 == 0 ? 0 : next() % 1000;
        series.set(window, value);
        model.set(window, value);
      }
      ASSERT_EQ(series.windows(window), model.windows) << "trial " << trial << " op " << op;
    }
  }
}

TEST(WindowedSeries, AHeapMadeLateAndDestroyedEarlyKeepsARunPerChangeNotAFigurePerWindow) {
  WindowedSeries<Reduce::Max> series;
  series.set(1000, 64);
  series.set(1003, 0);  // destroyed in window 1003, which starts at 64 as 1000-1002 held
  EXPECT_EQ(series.stored_runs(), 1u);  // 64 from window 1000
  uint32_t window = 5000;
  series.halve(window);  // windows 1000-1003 become 500-501, the rest all 0
  window /= 2;
  EXPECT_EQ(series.stored_runs(), 2u);  // 64 from window 500, 0 from window 502
  std::vector<uint64_t> expected(window + 1, 0);
  expected[500] = 64;
  expected[501] = 64;
  EXPECT_EQ(series.windows(window), expected);
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
