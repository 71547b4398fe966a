// Native call stacks of the application at a hooked call, without the tracer's own frames.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpumemtrace::interpose {

inline constexpr size_t kMaxStackDepth = 256;

// [low, high) of some machine code.
struct CodeRange {
  uintptr_t low = 0;
  uintptr_t high = 0;
  bool contains(uintptr_t ip) const { return ip >= low && ip < high; }
};

// Fills `out` (innermost first) with up to `max_depth` call-instruction addresses (return address − 1)
// of the frames outside libgpumemtrace. Returns the count. `*cut` (when given) tells whether frames
// beyond max_depth were left out (or may have been).
size_t capture_stack(uintptr_t* out, size_t max_depth, bool* cut = nullptr);

}  // namespace gpumemtrace::interpose
