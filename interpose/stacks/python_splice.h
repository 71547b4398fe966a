// Where a thread's Python frames go in its native stack: the splice, a pure function of the two stacks
// (docs/capture.md, "Python frames").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "gpumemtrace/trace_format.h"
#include "interpose/stacks/python/python_frames.h"
#include "interpose/stacks/stack_capture.h"

namespace gpumemtrace::interpose {

// In a captured stack, the i-th Python frame of the walk, not yet given its code index (that takes the
// recorder's lock): format::kTaggedFrame | i, where i < kMaxStackDepth. The truncation marker
// (format::kTruncatedFrame) is already final.
inline constexpr uint64_t pending_python_frame(size_t i) { return format::kTaggedFrame | i; }
inline constexpr bool is_pending_python_frame(uint64_t frame) {
  return format::is_tagged_frame(frame) && frame != format::kTruncatedFrame;
}
inline constexpr size_t pending_python_index(uint64_t frame) { return frame & ~format::kTaggedFrame; }

// The mixed stack, innermost first: each native frame inside `eval` (_PyEval_EvalFrameDefault) is
// replaced by the Python frames up to and including the next one flagged kFrameEntry (those that
// evaluation ran); other native frames stay where they are; Python frames left over (the native stack was
// cut, or did not show every evaluation) go at the outer end, and evaluation frames left over stay native. At most max_depth frames are kept; when frames were
// left out (of the mixed stack, of `native` when native_cut, of the walk when python_truncated) the
// marker format::kTruncatedFrame follows them. `out` holds max_depth + 1. Returns the count.
size_t splice_python_frames(std::span<const uintptr_t> native, bool native_cut,
                            std::span<const python::PythonFrame> python, bool python_truncated, CodeRange eval,
                            uintptr_t* out, size_t max_depth);

// At most how many Python frames splice_python_frames can place in a mixed stack of max_depth frames, so
// that the walk reads no more: the native frames inside the first evaluation frame come first; and when
// every Python frame is an evaluation of its own (CPython 3.10: one_frame_per_evaluation) and the native
// stack was cut, one Python frame per evaluation frame it shows.
size_t python_frames_room(std::span<const uintptr_t> native, bool native_cut, CodeRange eval,
                          bool one_frame_per_evaluation, size_t max_depth);

}  // namespace gpumemtrace::interpose
