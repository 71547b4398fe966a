// str objects read without CPython: compact ASCII and compact 1, 2 and 4 byte kinds become UTF-8, in the
// 3.10/3.11 layout (with wstr and the ready bit) and the 3.12+ layout; anything else is refused.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "interpose/stacks/python/python_unicode.h"
#include "tests/interpose/python/fake_type_objects.h"

namespace gpumemtrace::interpose::python {
namespace {

// A str object as CPython lays it out: header, state, then the data.
struct FakeStr {
  std::vector<char> bytes = std::vector<char>(512, 0);

  FakeStr(const PythonLayout& l, const std::u32string& text, unsigned kind, bool ascii, bool compact = true,
          bool ready = true, const void* type = &g_str_type) {
    std::memcpy(bytes.data() + l.ob_type, &type, sizeof type);
    int64_t length = static_cast<int64_t>(text.size());
    std::memcpy(bytes.data() + l.unicode_length, &length, sizeof length);
    uint32_t state = kind << l.state_kind_shift | (compact ? 1u : 0u) << l.state_compact_shift |
                     (ascii ? 1u : 0u) << l.state_ascii_shift;
    if (l.state_ready_shift >= 0 && ready) state |= 1u << l.state_ready_shift;
    std::memcpy(bytes.data() + l.unicode_state, &state, sizeof state);
    char* data = bytes.data() + (ascii ? l.unicode_ascii_size : l.unicode_compact_size);
    for (size_t i = 0; i < text.size(); ++i) {
      if (kind == 1) data[i] = static_cast<char>(text[i]);
      if (kind == 2) {
        auto unit = static_cast<uint16_t>(text[i]);
        std::memcpy(data + 2 * i, &unit, 2);
      }
      if (kind == 4) std::memcpy(data + 4 * i, &text[i], 4);
    }
  }
  const void* object() const { return bytes.data(); }
};

class Unicode : public testing::TestWithParam<unsigned> {
 protected:
  const PythonLayout& layout() const { return *layout_for_minor(GetParam()); }
  std::string read(const FakeStr& str) {
    std::string out = "<";
    EXPECT_TRUE(append_utf8(layout(), str.object(), &g_str_type, &out));
    return out;
  }
  bool refused(const FakeStr& str, const void* type = &g_str_type) {
    std::string out;
    bool ok = append_utf8(layout(), str.object(), type, &out);
    return !ok && out.empty();
  }
};

TEST_P(Unicode, CompactKindsBecomeUtf8) {
  EXPECT_EQ(read(FakeStr(layout(), U"/src/train.py", 1, true)), "</src/train.py");
  EXPECT_EQ(read(FakeStr(layout(), U"grüße", 1, false)), "<grüße");
  EXPECT_EQ(read(FakeStr(layout(), U"Ünï.関数", 2, false)), "<Ünï.関数");
  EXPECT_EQ(read(FakeStr(layout(), U"𠀀_😀", 4, false)), "<𠀀_😀");
  EXPECT_EQ(read(FakeStr(layout(), U"", 1, true)), "<");
}

TEST_P(Unicode, Surrogates) {
  // surrogateescape'd file name bytes come back as those bytes; other lone surrogates as U+FFFD.
  EXPECT_EQ(read(FakeStr(layout(), U"bad_\xDCFF.py", 2, false)), "<bad_\xFF.py");
  EXPECT_EQ(read(FakeStr(layout(), U"x\xD800y", 2, false)), "<x\xEF\xBF\xBDy");
}

TEST_P(Unicode, RefusesWhatItCannotRead) {
  EXPECT_TRUE(refused(FakeStr(layout(), U"abc", 1, true), &g_other_type));  // not a str
  EXPECT_TRUE(refused(FakeStr(layout(), U"abc", 1, true, /*compact=*/false)));
  EXPECT_TRUE(refused(FakeStr(layout(), U"abc", 3, false)));  // no such kind
  EXPECT_TRUE(refused(FakeStr(layout(), U"abc", 2, true)));   // ASCII is always kind 1
  if (layout().state_ready_shift >= 0) {
    EXPECT_TRUE(refused(FakeStr(layout(), U"abc", 1, true, true, /*ready=*/false)));
  }
  std::string out;
  EXPECT_FALSE(append_utf8(layout(), nullptr, &g_str_type, &out));
}

INSTANTIATE_TEST_SUITE_P(Versions, Unicode, testing::Values(10u, 11u, 12u, 13u, 14u),
                         [](const testing::TestParamInfo<unsigned>& info) {
                           return "py3_" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace gpumemtrace::interpose::python
