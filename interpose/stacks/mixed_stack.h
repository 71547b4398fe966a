// The calling thread's stack for an event: native frames, and, on a thread that runs Python code, its
// Python frames spliced in where the interpreter ran them (docs/capture.md, "Python frames").
#pragma once

#include <cstddef>
#include <cstdint>

#include "interpose/stacks/python/python_frames.h"
#include "interpose/stacks/python_splice.h"
#include "interpose/stacks/stack_capture.h"

namespace gpumemtrace::interpose {

// The process's CPython as the tracer sees it.
struct ProcessPython {
  python::PythonStacks* stacks = nullptr;  // nullptr: no CPython, or one whose frames cannot be read
  CodeRange eval;                          // _PyEval_EvalFrameDefault
};
ProcessPython find_process_python();  // looks it up, and logs why a CPython found is not supported

// Found at the first call; later calls cost a load (inline: a program without Python pays no call).
inline const ProcessPython& process_python() {
  static const ProcessPython python = find_process_python();
  return python;
}

struct CapturedStack {
  uintptr_t frames[kMaxStackDepth + 1];  // innermost first; pending Python frames; the truncation marker last
  size_t depth = 0;
  python::PythonStacks* python = nullptr;     // set when frames holds pending Python frames,
  const python::PythonFrame* walk = nullptr;  // which index these (the calling thread's walk)
};

// The stack of the calling thread, at most max_depth frames (+ the truncation marker): mixed when the
// thread has Python frames, else exactly its native stack. The Python frames are walked into room the
// thread keeps (allocated at its first walk), valid until its next capture.
void capture_mixed_stack(CapturedStack& out, size_t max_depth, python::PythonStacks& python);

}  // namespace gpumemtrace::interpose
