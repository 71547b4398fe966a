// Pieces every report prints: the trace line, times, frames and stacks, as text for people and as JSON.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "analyzer/cli/json_tree.h"
#include "analyzer/cli/report_command.h"
#include "analyzer/symbolize/frame.h"

namespace gpumemtrace::cli {

// "350 µs", "1.235 ms", "12.500 s": a time since the trace started.
std::string format_time(uint64_t ns);

// "device 0", "managed memory", "pinned host memory".
std::string account_name(const replay::Account& account);

// "ns::f<…>" for "void ns::f<int>(int) const": the name without return type, template arguments and
// parameters, for text meant for people (JSON keeps the whole demangled name).
std::string short_function_name(std::string_view name);
// "accumulate_loss (train_loop.cpp:88)", "cudaMalloc (libcudart.so.13+0x1a719)", "0x7f00001234".
std::string frame_text(const symbolize::Frame& frame);
// The frames that tell where in the program: those with source information up to main, outside the
// CUDA driver and runtime, at most max_frames, joined by " ← "; the innermost frames when none has source
// information.
std::string compact_stack(std::span<const symbolize::Frame> frames, size_t max_frames = 3);
// Every frame on its own line, indented.
void append_stack_lines(fmt::memory_buffer& out, std::span<const symbolize::Frame> frames, std::string_view indent);

// "trace: PATH (pid N: COMMAND)" and whether it is complete, then any inconsistencies.
void append_trace_header(fmt::memory_buffer& out, const ReportContext& context);

// {"function","file","line","module","kind":"native"}
void write_frame(JsonTree& json, const symbolize::Frame& frame);
void write_stack(JsonTree& json, std::string_view key, std::span<const symbolize::Frame> frames);
// The device ordinal, or null for memory that has none.
void write_device(JsonTree& json, std::string_view key, int32_t device);
// "trace": {"path","pid","command","complete","events"}
void write_trace(JsonTree& json, const report::TraceInfo& trace);

}  // namespace gpumemtrace::cli
