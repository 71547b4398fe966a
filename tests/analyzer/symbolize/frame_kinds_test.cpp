// The kinds of frame the symbolizer makes (analyzer/symbolize/symbolizer.h), one reference of each kind: the
// marker of a cut stack, a Python frame, a frame known by name only, an address in no module, and an address
// in a module whose file is gone (module + offset, one warning for the module).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/symbolize/symbolizer.h"

namespace gpumemtrace::test {
namespace {

using replay::FrameRef;
using symbolize::Frame;
using symbolize::FrameKind;

struct KindCase {
  std::string name;
  FrameRef ref;
  FrameKind kind;
  std::string function;
  std::string module;
  uint32_t line;
  uint64_t offset;
};

TEST(FrameKinds, EachReferenceBecomesItsKindOfFrame) {
  const std::vector<replay::ModuleRef> modules = {{"/nonexistent/libgone.so", "", 0x7f0000000000}};
  std::vector<std::string> warnings;
  symbolize::Symbolizer symbolizer(modules, [&](std::string_view message) { warnings.emplace_back(message); });
  const std::vector<KindCase> cases = {
      {"a cut stack", FrameRef::truncation(), FrameKind::Truncated, "(truncated)", "", 0, 0},
      // Without the stack table's code table the function and file stay empty; the line is the frame's.
      {"a Python frame", FrameRef::python(3, 57), FrameKind::Python, "", "", 57, 0},
      {"a frame known by name only", FrameRef::named(2, 12), FrameKind::Native, "", "", 12, 0},
      {"an address in no module", FrameRef{replay::kNoModule, 0x1234}, FrameKind::Native, "", "", 0, 0x1234},
      {"an address in a module that is gone", FrameRef{0, 0x10}, FrameKind::Native, "", "/nonexistent/libgone.so", 0,
       0x10},
  };
  for (const KindCase& c : cases) {
    const std::vector<Frame>& frames = symbolizer.frames(c.ref);
    ASSERT_EQ(frames.size(), 1u) << c.name;
    const Frame& frame = frames[0];
    EXPECT_EQ(frame.kind, c.kind) << c.name;
    EXPECT_EQ(frame.function, c.function) << c.name;
    EXPECT_EQ(frame.module, c.module) << c.name;
    EXPECT_EQ(frame.line, c.line) << c.name;
    EXPECT_EQ(frame.offset, c.offset) << c.name;
    EXPECT_TRUE(frame.file.empty()) << c.name;
  }
  EXPECT_EQ(symbolizer.frames(FrameRef{0, 0x20}).at(0).module, "/nonexistent/libgone.so");
  EXPECT_EQ(warnings.size(), 1u);  // once for the module, however many of its addresses
}

}  // namespace
}  // namespace gpumemtrace::test
