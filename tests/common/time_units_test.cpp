#include "common/time_units.h"

#include <gtest/gtest.h>

using gpumemtrace::parse_duration;

TEST(ParseDuration, AcceptsUnitsAndPlainNanoseconds) {
  EXPECT_EQ(parse_duration("1500"), 1500u);
  EXPECT_EQ(parse_duration("120ns"), 120u);
  EXPECT_EQ(parse_duration("350us"), 350'000u);
  EXPECT_EQ(parse_duration("350µs"), 350'000u);
  EXPECT_EQ(parse_duration("2.5ms"), 2'500'000u);
  EXPECT_EQ(parse_duration("1.5 s"), 1'500'000'000u);
}

TEST(ParseDuration, RejectsGarbageNegativesAndOverflow) {
  EXPECT_FALSE(parse_duration(""));
  EXPECT_FALSE(parse_duration("ms"));
  EXPECT_FALSE(parse_duration("-5ms"));
  EXPECT_FALSE(parse_duration("."));
  EXPECT_FALSE(parse_duration("3 fortnights"));
  EXPECT_FALSE(parse_duration("99999999999 s"));
}
