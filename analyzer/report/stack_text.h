// Frames and stacks as short text for people: the text output and the OOM findings use them.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "analyzer/symbolize/frame.h"
#include "analyzer/report/stacks.h"

namespace gpumemtrace::report {

// "ns::f<…>" for "void ns::f<int>(int) const [clone .constprop.0]": the name without return type, template
// arguments, parameters and clone suffix (JSON keeps the whole demangled name).
std::string short_function_name(std::string_view name);
// "accumulate_loss (train_loop.cpp:88)", "cudaMalloc (libcudart.so.13+0x1a719)", "0x7f00001234";
// a Python frame "train.py:57 in train_step"; the end of a cut stack "… (truncated)".
std::string frame_text(const symbolize::Frame& frame);
// The frames that say where the program was, for people: the stack without the CUDA driver and runtime,
// the interpreter's machinery, ctypes/libffi glue and the code that reports to the tracer (NVTX's headers,
// annotate.h, the Python module gpumemtrace) at its innermost end, so that the first frame is the
// program's own code; and, when it has Python frames, without the interpreter's native frames between
// them and the interpreter's start-up frames beyond the outermost one, and without PyTorch's own frames
// (its installed Python package, libtorch, libc10) at the innermost end. Native frames of extension code
// between Python frames stay. In the C++ stacks of a PyTorch snapshot (frames known by name only) the
// caching allocator's internals count as the CUDA runtime, CPython's sources as the interpreter, the
// operator dispatcher's generated code (Register*.cpp) as glue, and frames without a source file are left
// out wherever they are. A native stack ends at main, and a thread's at its function: what calls them is the
// C library's start-up. PyTorch's caching allocator counts as the CUDA runtime in native stacks too. A stack of
// machinery only is kept whole.
Frames user_frames(std::span<const symbolize::Frame> frames);
// Every stack as user_frames() of it: their own code on top.
Stacks user_stacks(const Stacks& stacks);
// The frames that tell where in the program: of user_frames(), those with source information up to main,
// at most max_frames, joined by " ← "; the innermost frames when none has source information.
std::string compact_stack(std::span<const symbolize::Frame> frames, size_t max_frames = 3);
// "libcudart.so.13" for "/usr/lib/libcudart.so.13" (and "model.py" for "D:\\work\\model.py").
std::string_view basename_of(std::string_view path);

}  // namespace gpumemtrace::report
