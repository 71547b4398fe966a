// Native call stacks of the application at a hooked call, without the tracer's own frames.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpumemtrace::interpose {

inline constexpr size_t kMaxStackDepth = 256;

// Fills `out` (innermost first) with up to `max_depth` call-instruction addresses (return address − 1)
// of the frames outside libgpumemtrace. Returns the count.
size_t capture_stack(uintptr_t* out, size_t max_depth);

}  // namespace gpumemtrace::interpose
