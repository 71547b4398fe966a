#include "common/shortened_text.h"

#include <gtest/gtest.h>

using gpumemtrace::shortened_text;

TEST(ShortenedText, ShortTextIsKept) {
  EXPECT_EQ(shortened_text("train_step", 10), "train_step");
  EXPECT_EQ(shortened_text("", 0), "");
}

TEST(ShortenedText, LongTextKeepsItsStartAndMoreOfItsEnd) {
  std::string text = "abcdefghijklmnopqrstuvwxyz";
  std::string cut = shortened_text(text, 12);  // 9 bytes of text around the 3 of "…"
  EXPECT_EQ(cut, "abc…uvwxyz");
  EXPECT_EQ(cut.size(), 12u);
}

TEST(ShortenedText, CutsOnlyBetweenCharacters) {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "é";  // 2 bytes each
  std::string cut = shortened_text(text, 13);  // 10 bytes of text: 3 before, 7 after, moved to boundaries
  EXPECT_LE(cut.size(), 13u);
  EXPECT_EQ(cut, "é…éééé");
}

TEST(ShortenedText, NoRoomForTextLeavesTheEllipsis) { EXPECT_EQ(shortened_text("abcdef", 2), "…"); }
