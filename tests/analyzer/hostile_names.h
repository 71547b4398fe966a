// A hand-built trace whose every name holds what must never reach a terminal, a spreadsheet or an XML
// parser as it is (docs/reliability.md, "Hostile inputs and files"): escape sequences that set the terminal's
// title, clear the screen and write the clipboard (OSC 52), a newline, a C1 control (U+009B, CSI), bytes
// that are not UTF-8, and cells that start like a spreadsheet formula. Times in µs: four instances of phase
// kPhase, each leaving 1 MiB more live from the Python frame; in the second a heap over a segment, a block
// from the named native frame, 2 MiB from the named native frame and an out-of-memory failure; a PyTorch
// snapshot whose file is missing. `more` adds 1 MiB from the Python frame at the end (a run that grew).
#pragma once

#include <string>
#include <string_view>

#include "common/size_units.h"
#include "common/utf8.h"
#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {

namespace hostile {

// String literals are joined where a hex escape would swallow the next letter.
inline constexpr std::string_view kPhase = "step\x1b]0;owned\x07\n\xc2\x9b\xff" "end";
inline constexpr std::string_view kDomain = "net\x1b[2J";
inline constexpr std::string_view kHeap = "arena\x1b]52;c;ZXZpbA==\x07";
inline constexpr std::string_view kPythonFile = "=HYPERLINK(\"evil\",\"y\")\x1b[31m.py";
inline constexpr std::string_view kPythonFunction = "@SUM(1+1)\xfe";
inline constexpr std::string_view kNativeFunction = "-2+3\x7f\xc0\xaf";
inline constexpr std::string_view kNativeFile = "-1.5";  // a number: stays as it is in CSV
inline constexpr std::string_view kModule = "/nonexistent/+lib\x1b[2J\xff.so";
inline constexpr std::string_view kSnapshot = "snap\x1b[2J.pickle";
inline constexpr std::string_view kCommand = "train\x1b]0;title\x07";
inline constexpr std::string_view kArgument = "--lr=\xff";

// The first byte a terminal must not get raw, with what is around it, or "" when there is none: C0 controls
// but the newlines that end lines, DEL, C1 controls (U+0080 to U+009F) and bytes that are not UTF-8.
inline std::string raw_control(std::string_view text) {
  auto around = [&](size_t i) {
    std::string_view near = text.substr(i < 20 ? 0 : i - 20, 40);
    return "at byte " + std::to_string(i) + ": \"" + std::string(near) + "\"";
  };
  for (size_t i = 0, length; i < text.size(); i += length) {
    auto c = static_cast<unsigned char>(text[i]);
    if ((length = utf8_sequence_length(text, i)) == 0) return around(i);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return around(i);
    if (c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) return around(i);
  }
  return "";
}

inline TraceBuilder trace(bool more = false) {
  using format::Api;
  TraceBuilder b;
  b.process(7, 1, 1'700'000'000'000'000'000, 64, -1, "host\x1b[2J", "/bin/evil\x1b[2J", {kCommand, kArgument});
  b.modules_begin(1).module(0x400000, 0x400000, 0x500000, kModule, "");
  b.thread_new(1, 7, "main\x1b[2J");
  b.python_code(kPythonFile, kPythonFunction, 10);
  b.record(trace::NativeFunction{0, kNativeFunction, kNativeFile});
  b.stack_node(0, format::python_frame(0, 12));  // 1
  b.stack_node(0, format::named_frame(0, 5));    // 2
  b.stack_node(0, 0x401000);                     // 3: in the module
  b.record(trace::PhaseDomain{1, kDomain}).record(trace::PhaseName{0, 1, kPhase});
  uint64_t address = 0x10000000;
  for (int instance = 0; instance < 4; ++instance) {
    b.event(trace::PhasePush{{}, 0}, 1000);
    b.alloc(Api::cudaMalloc, 0, address, kMiB, 1, 1000);  // left live: the phase's growth, the leaks
    address += kMiB;
    if (instance == 1) {
      b.alloc(Api::cudaMalloc, 0, 0x70000000, 4 * kMiB, 3, 1000);
      b.alloc(Api::cudaMalloc, 0, 0x60000000, 2 * kMiB, 2, 1000);
      b.event(trace::HeapCreate{{}, 1, 0, 0x70000000, 4 * kMiB, kHeap}, 1000);
      b.event(trace::SubAlloc{{}, 1, 0x70000000, 1000, 1024, 2}, 1000);
      b.alloc_failed(Api::cudaMalloc, 0, uint64_t{1} << 40, 1, format::kErrorOutOfMemory, 1000, kMiB, 16 * kMiB);
      b.event(trace::TorchSnapshot{{}, 0, 1, 7000, 1'700'000'000'000'007'000, kSnapshot}, 1000);
    }
    b.event(trace::PhasePop{{}, 1}, 1000);
  }
  if (more) b.alloc(Api::cudaMalloc, 0, 0x50000000, kMiB, 1, 1000);
  b.end(more ? 22 : 21, 1000);
  return b;
}

}  // namespace hostile

}  // namespace gpumemtrace::test
