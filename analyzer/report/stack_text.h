// Frames and stacks as short text for people: the text output and the OOM findings use them.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "analyzer/symbolize/frame.h"

namespace gpumemtrace::report {

// "ns::f<…>" for "void ns::f<int>(int) const": the name without return type, template arguments and
// parameters (JSON keeps the whole demangled name).
std::string short_function_name(std::string_view name);
// "accumulate_loss (train_loop.cpp:88)", "cudaMalloc (libcudart.so.13+0x1a719)", "0x7f00001234".
std::string frame_text(const symbolize::Frame& frame);
// The frames that tell where in the program: those with source information up to main, outside the
// CUDA driver and runtime, at most max_frames, joined by " ← "; the innermost frames when none has source
// information.
std::string compact_stack(std::span<const symbolize::Frame> frames, size_t max_frames = 3);
// "libcudart.so.13" for "/usr/lib/libcudart.so.13".
std::string_view basename_of(std::string_view path);

}  // namespace gpumemtrace::report
