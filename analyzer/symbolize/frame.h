// One frame of a symbolized stack. A return address inside inlined code becomes several frames: the
// inlined functions innermost first, then the function they were inlined into. A Python frame is one
// frame: function, file and line of the Python source. A stack whose outer frames were cut ends in a
// Truncated frame.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpumemtrace::symbolize {

enum class FrameKind : uint8_t {
  Native,     // machine code: function, file and line from the module's symbols and debug information; a
              // frame known by name only (of a PyTorch snapshot) has no module, and its file as recorded
  Python,     // a Python frame: function is the qualified name ("Class.method"), file the source file
              // (co_filename), line the line being executed (0 when unknown); module and offset are empty
  Truncated,  // not a frame: the outer frames of this stack were cut (function "(truncated)")
};

// "native", "python", "truncated".
constexpr std::string_view frame_kind_name(FrameKind kind) {
  return kind == FrameKind::Python ? "python" : kind == FrameKind::Truncated ? "truncated" : "native";
}

struct Frame {
  std::string function;  // demangled; the ELF symbol when there is no debug info; empty when unknown
  std::string file;      // empty without debug info
  uint32_t line = 0;     // 0 without debug info
  std::string module;    // the module's path; empty for an address in no known module
  uint64_t offset = 0;   // the address within the module (the absolute address without a module)
  bool inlined = false;  // this call was inlined into the next frame
  FrameKind kind = FrameKind::Native;
};

}  // namespace gpumemtrace::symbolize
