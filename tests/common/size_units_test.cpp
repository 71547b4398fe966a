#include "common/size_units.h"

#include <gtest/gtest.h>

using gpumemtrace::format_size;
using gpumemtrace::parse_size;

TEST(ParseSize, AcceptsBinaryUnitsAndPlainBytes) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("16GiB"), 16ull << 30);
  EXPECT_EQ(parse_size("512M"), 512ull << 20);
  EXPECT_EQ(parse_size("512 MB"), 512ull << 20);
  EXPECT_EQ(parse_size("1.5 GiB"), 3ull << 29);
  EXPECT_EQ(parse_size("2k"), 2048u);
  EXPECT_EQ(parse_size("7 B"), 7u);
}

TEST(ParseSize, RejectsGarbageAndOverflow) {
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("GiB"));
  EXPECT_FALSE(parse_size("12 parsecs"));
  EXPECT_FALSE(parse_size("99999999999999999999"));
  EXPECT_FALSE(parse_size("17179869184 GiB"));
}

TEST(FormatSize, UsesBinaryUnits) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(1536), "1.50 KiB");
  EXPECT_EQ(format_size(16ull << 30), "16.0 GiB");
  EXPECT_EQ(format_size(200ull << 20), "200 MiB");
}
