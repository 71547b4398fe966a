#include "interpose/stacks/python_splice.h"

namespace gpumemtrace::interpose {

using python::kFrameEntry;
using python::PythonFrame;

size_t splice_python_frames(std::span<const uintptr_t> native, bool native_cut, std::span<const PythonFrame> python,
                            bool python_truncated, CodeRange eval, uintptr_t* out, size_t max_depth) {
  size_t n = 0, next = 0;  // next: the first Python frame not placed yet
  bool cut = false;
  auto put = [&](uintptr_t frame) {
    if (n == max_depth) return !(cut = true);
    out[n++] = frame;
    return true;
  };
  for (uintptr_t ip : native) {
    if (!eval.contains(ip) || next == python.size()) {
      if (!put(ip)) break;
      continue;
    }
    // This evaluation ran the Python frames up to its entry frame.
    bool entry = false;
    while (next < python.size() && !entry && put(pending_python_frame(next))) entry = python[next++].flags & kFrameEntry;
    if (cut) break;
  }
  while (!cut && next < python.size()) put(pending_python_frame(next++));
  if (cut || native_cut || python_truncated) out[n++] = format::kTruncatedFrame;
  return n;
}

size_t python_frames_room(std::span<const uintptr_t> native, bool native_cut, CodeRange eval,
                          bool one_frame_per_evaluation, size_t max_depth) {
  size_t inner = 0, evaluations = 0;
  for (uintptr_t ip : native) {
    if (eval.contains(ip))
      ++evaluations;
    else if (evaluations == 0)
      ++inner;
  }
  size_t room = max_depth > inner ? max_depth - inner : 0;
  if (one_frame_per_evaluation && native_cut && evaluations < room) room = evaluations;
  return room;
}

}  // namespace gpumemtrace::interpose
