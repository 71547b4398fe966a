// One frame of a symbolized stack. A return address inside inlined code becomes several frames: the
// inlined functions innermost first, then the function they were inlined into.
#pragma once

#include <cstdint>
#include <string>

namespace gpumemtrace::symbolize {

struct Frame {
  std::string function;  // demangled; the ELF symbol when there is no debug info; empty when unknown
  std::string file;      // empty without debug info
  uint32_t line = 0;     // 0 without debug info
  std::string module;    // the module's path; empty for an address in no known module
  uint64_t offset = 0;   // the address within the module (the absolute address without a module)
  bool inlined = false;  // this call was inlined into the next frame
};

}  // namespace gpumemtrace::symbolize
