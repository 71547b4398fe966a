// The small pieces every text renderer shares (analyzer/render/text_parts.h).
#include <gtest/gtest.h>

#include "analyzer/render/text_parts.h"

namespace gpumemtrace::render {
namespace {

TEST(TextParts, CountedNounsAreSingularForOne) {
  EXPECT_EQ(counted(0, "block"), "0 blocks");
  EXPECT_EQ(counted(1, "block"), "1 block");
  EXPECT_EQ(counted(2, "allocation"), "2 allocations");
}

TEST(TextParts, ASparklineDrawsEachValueAgainstTheLargest) {
  EXPECT_EQ(sparkline({0, 4, 8}), "▁▅█");
  EXPECT_EQ(sparkline({0, 0}), "▁▁");
}

TEST(TextParts, ASeriesLongerThanTheWidthKeepsTheMostOfEachMergedSlice) {
  std::vector<uint64_t> maxima(130, 1);
  maxima[2] = 9;     // the first merged slice: 0..2
  maxima[129] = 7;   // the last one holds 129 alone
  MostPerSlice series = most_per_slice(maxima, 60);
  EXPECT_EQ(series.merged, 3u);
  ASSERT_EQ(series.values.size(), 44u);
  EXPECT_EQ(series.values.front(), 9u);
  EXPECT_EQ(series.values[1], 1u);
  EXPECT_EQ(series.values.back(), 7u);
  MostPerSlice short_series = most_per_slice({3, 1, 2}, 60);
  EXPECT_EQ(short_series.merged, 1u);
  EXPECT_EQ(short_series.values, (std::vector<uint64_t>{3, 1, 2}));
}

}  // namespace
}  // namespace gpumemtrace::render
