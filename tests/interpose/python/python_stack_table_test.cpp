// Python frames on the analyzer's side, on hand-built traces: replay::StackTable gives the same Python line
// the same FrameRef across StacksReset and across PythonCode records of the same code, and
// symbolize::Symbolizer names Python frames from the code table.
#include <gtest/gtest.h>

#include <vector>

#include "analyzer/replay/stack_table.h"
#include "analyzer/symbolize/symbolizer.h"
#include "tests/support/decode_helpers.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using symbolize::FrameKind;

// Interns the stack of every Alloc, in order.
std::vector<replay::StackId> alloc_stacks(const std::vector<uint8_t>& bytes, replay::StackTable& table) {
  trace::Reader reader(bytes);
  std::vector<replay::StackId> out;
  while (const trace::Record* record = reader.next())
    if (const auto* alloc = std::get_if<trace::Alloc>(record)) out.push_back(table.intern(reader, alloc->stack));
  EXPECT_EQ(reader.status(), trace::Status::Complete) << reader.error();
  return out;
}

TEST(PythonStackTable, PythonFramesAndTheMarkerBecomeFramesOfTheirOwn) {
  replay::StackTable table;
  std::vector<replay::StackId> stacks = alloc_stacks(python_frames_trace().bytes(), table);
  ASSERT_EQ(stacks.size(), 2u);
  std::vector<replay::FrameRef> frames = table.frames(stacks[0]);
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames[0], (replay::FrameRef{replay::kNoModule, 0x7f0000001234}));
  EXPECT_TRUE(frames[1].is_python());
  EXPECT_EQ(frames[1].python_line(), 57u);
  EXPECT_EQ(frames[2], (replay::FrameRef{replay::kNoModule, 0x401000}));
  EXPECT_TRUE(frames[3].is_python());
  EXPECT_EQ(frames[3].python_line(), 90u);
  EXPECT_TRUE(frames[4].is_truncation());
  ASSERT_EQ(table.python_codes().size(), 2u);
  EXPECT_EQ(table.python_codes()[frames[1].python_code()],
            (replay::PythonCodeRef{"/srv/train.py", "Trainer.step", 50}));
  EXPECT_EQ(table.python_codes()[frames[3].python_code()].qualname, "<module>");

  symbolize::Symbolizer symbolizer(table, [](std::string_view warning) { ADD_FAILURE() << warning; });
  std::vector<symbolize::Frame> symbolized = symbolizer.stack(frames);
  ASSERT_EQ(symbolized.size(), 5u);
  EXPECT_EQ(symbolized[0].kind, FrameKind::Native);
  EXPECT_EQ(symbolized[1].kind, FrameKind::Python);
  EXPECT_EQ(symbolized[1].function, "Trainer.step");
  EXPECT_EQ(symbolized[1].file, "/srv/train.py");
  EXPECT_EQ(symbolized[1].line, 57u);
  EXPECT_TRUE(symbolized[1].module.empty());
  EXPECT_EQ(symbolized[3].function, "<module>");
  EXPECT_EQ(symbolized[4].kind, FrameKind::Truncated);
  EXPECT_EQ(symbolize::frame_kind_name(symbolized[4].kind), "truncated");
}

TEST(PythonStackTable, TheSameLineIsTheSameFrameAcrossResetsAndCodeRecords) {
  TraceBuilder b;
  b.python_code("/srv/train.py", "Trainer.step", 50);
  b.stack_node(0, format::python_frame(0, 57));
  b.alloc(Api::cudaMalloc, 0, 0x1000, 1, 1, 1);
  b.stacks_reset();
  // The same function again under another index (its code object was seen at another address), and another
  // function of the same name elsewhere in the file.
  b.python_code("/srv/train.py", "Trainer.step", 50);
  b.python_code("/srv/train.py", "Trainer.step", 70);
  b.stack_node(0, format::python_frame(1, 57));
  b.stack_node(0, format::python_frame(2, 57));
  b.alloc(Api::cudaMalloc, 0, 0x2000, 1, 1, 1);
  b.alloc(Api::cudaMalloc, 0, 0x3000, 1, 2, 1);
  b.end(3, 1);
  replay::StackTable table;
  std::vector<replay::StackId> stacks = alloc_stacks(b.bytes(), table);
  ASSERT_EQ(stacks.size(), 3u);
  EXPECT_EQ(stacks[0], stacks[1]);
  EXPECT_NE(stacks[0], stacks[2]);
  EXPECT_EQ(table.python_codes().size(), 2u);
}

TEST(PythonStackTable, ASymbolizerWithoutTheCodeTableStillTellsPythonFramesApart) {
  replay::StackTable table;
  std::vector<replay::StackId> stacks = alloc_stacks(python_frames_trace().bytes(), table);
  symbolize::Symbolizer symbolizer(table.modules(), [](std::string_view) {});
  std::vector<symbolize::Frame> frames = symbolizer.stack(table.frames(stacks[0]));
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames[1].kind, FrameKind::Python);
  EXPECT_EQ(frames[1].line, 57u);
  EXPECT_TRUE(frames[1].function.empty());
  // It has no table to look a stack up by id in: no frames, not a crash.
  EXPECT_TRUE(symbolizer.stack(stacks[0]).empty());
}

}  // namespace
}  // namespace gpumemtrace::test
