// The splice of Python frames into a native stack (interpose/stacks/python_splice.h), on hand-made stacks.
#include "interpose/stacks/python_splice.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpumemtrace::interpose {
namespace {

using python::kFrameEntry;
using python::PythonFrame;

constexpr CodeRange kEval{0x5000, 0x6000};
constexpr uintptr_t kEval0 = 0x5010, kEval1 = 0x5020, kEval2 = 0x5030;  // inside _PyEval_EvalFrameDefault
constexpr uintptr_t kTruncated = format::kTruncatedFrame;

// Python frame i of the walk, as the splice leaves it.
constexpr uintptr_t P(size_t i) { return pending_python_frame(i); }

std::vector<PythonFrame> walk(std::initializer_list<bool> entries) {
  std::vector<PythonFrame> frames;
  for (bool entry : entries) frames.push_back(PythonFrame{nullptr, 1, 0, entry ? kFrameEntry : 0, python::LineKey{}});
  return frames;
}

std::vector<uintptr_t> splice(const std::vector<uintptr_t>& native, const std::vector<PythonFrame>& python,
                              size_t max_depth = 64, bool native_cut = false, bool python_truncated = false) {
  std::vector<uintptr_t> out(max_depth + 1);
  out.resize(splice_python_frames(native, native_cut, python, python_truncated, kEval, out.data(), max_depth));
  return out;
}

TEST(PythonSplice, EachEvaluationTakesItsFramesUpToItsEntry) {
  // 3.11+: one evaluation runs several Python frames (Python-to-Python calls are inlined).
  EXPECT_EQ(splice({0x1, 0x2, kEval0, 0x3, kEval1, 0x4}, walk({false, true, false, false, true})),
            (std::vector<uintptr_t>{0x1, 0x2, P(0), P(1), 0x3, P(2), P(3), P(4), 0x4}));
  // 3.10: every frame is its own evaluation.
  EXPECT_EQ(splice({0x1, kEval0, 0x2, kEval1, 0x3}, walk({true, true})),
            (std::vector<uintptr_t>{0x1, P(0), 0x2, P(1), 0x3}));
}

TEST(PythonSplice, NativeCodeBetweenEvaluationsStaysInOrder) {
  // A callback: runtime (native) <- compare (Python) <- qsort (native) <- caller (Python) <- main.
  EXPECT_EQ(splice({0x10, 0x11, kEval0, 0x20, 0x21, kEval1, 0x30}, walk({true, false, true})),
            (std::vector<uintptr_t>{0x10, 0x11, P(0), 0x20, 0x21, P(1), P(2), 0x30}));
}

TEST(PythonSplice, LeftoversGoOutside) {
  // More evaluations than Python frames: the outer ones stay native.
  EXPECT_EQ(splice({0x1, kEval0, kEval1, kEval2, 0x2}, walk({true})),
            (std::vector<uintptr_t>{0x1, P(0), kEval1, kEval2, 0x2}));
  // Python frames no evaluation frame took (the native stack ends early): at the outer end.
  EXPECT_EQ(splice({0x1, kEval0}, walk({true, false, true})), (std::vector<uintptr_t>{0x1, P(0), P(1), P(2)}));
  EXPECT_EQ(splice({0x1, 0x2}, walk({false, true})), (std::vector<uintptr_t>{0x1, 0x2, P(0), P(1)}));
}

TEST(PythonSplice, TheDepthAppliesToTheMixedStackAndACutIsMarked) {
  std::vector<uintptr_t> native{0x1, kEval0, 0x2};
  std::vector<PythonFrame> python = walk({false, false, true});
  EXPECT_EQ(splice(native, python, 5), (std::vector<uintptr_t>{0x1, P(0), P(1), P(2), 0x2}));
  EXPECT_EQ(splice(native, python, 4), (std::vector<uintptr_t>{0x1, P(0), P(1), P(2), kTruncated}));
  EXPECT_EQ(splice(native, python, 2), (std::vector<uintptr_t>{0x1, P(0), kTruncated}));  // inside an evaluation
  EXPECT_EQ(splice({0x1}, python, 3), (std::vector<uintptr_t>{0x1, P(0), P(1), kTruncated}));  // in the leftovers
}

TEST(PythonSplice, ANativeOrPythonStackCutBeforeIsMarked) {
  std::vector<uintptr_t> native{0x1, kEval0};
  EXPECT_EQ(splice(native, walk({true}), 64, /*native_cut=*/true), (std::vector<uintptr_t>{0x1, P(0), kTruncated}));
  EXPECT_EQ(splice(native, walk({true}), 64, false, /*python_truncated=*/true),
            (std::vector<uintptr_t>{0x1, P(0), kTruncated}));
}

TEST(PythonSplice, TheWalkReadsNoMoreFramesThanCanBePlaced) {
  // The native frames inside the first evaluation come first.
  EXPECT_EQ(python_frames_room({{0x1, 0x2, kEval0, 0x3}}, false, kEval, false, 64), 62u);
  EXPECT_EQ(python_frames_room({{0x1, 0x2, 0x3}}, false, kEval, false, 64), 61u);
  EXPECT_EQ(python_frames_room({{0x1, 0x2, 0x3}}, true, kEval, false, 3), 0u);
  // 3.10, a cut native stack: one Python frame per evaluation frame.
  EXPECT_EQ(python_frames_room({{0x1, kEval0, 0x2, kEval1, 0x3}}, true, kEval, true, 5), 2u);
  EXPECT_EQ(python_frames_room({{0x1, kEval0, 0x2, kEval1, 0x3}}, false, kEval, true, 5), 4u);  // leftovers fit
  EXPECT_EQ(python_frames_room({{0x1, kEval0, 0x2, kEval1, 0x3}}, true, kEval, false, 5), 4u);  // 3.11+
  // The bound is what the splice places: with one more frame walked the stack is cut all the same.
  std::vector<uintptr_t> native{0x1, kEval0, 0x2, kEval1, kEval2};
  EXPECT_EQ(splice(native, walk({true, true, true, true}), 5, true),
            (std::vector<uintptr_t>{0x1, P(0), 0x2, P(1), P(2), kTruncated}));
}

TEST(PythonSplice, PendingFramesAreTaggedAndNotTheMarker) {
  for (size_t i : {size_t{0}, size_t{1}, kMaxStackDepth - 1}) {
    EXPECT_TRUE(is_pending_python_frame(P(i)));
    EXPECT_EQ(pending_python_index(P(i)), i);
  }
  EXPECT_FALSE(is_pending_python_frame(kTruncated));
  EXPECT_FALSE(is_pending_python_frame(0x7fffffffffff));
}

}  // namespace
}  // namespace gpumemtrace::interpose
