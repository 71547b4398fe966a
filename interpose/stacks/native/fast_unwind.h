// A stack walker for x86-64 that follows cached frame rules (frame_rule_cache.h): a few loads per frame
// instead of libunwind's general machinery. It gives up, and says so, at the first frame whose rule it does
// not understand; the caller then unwinds with libunwind.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpumemtrace::interpose {

// Fills `out` with the return addresses of up to `max` frames, innermost first, starting with a frame of
// this function's caller chain inside the tracer. Returns the count, or -1 when it cannot walk this stack.
long fast_backtrace(uintptr_t* out, size_t max);

}  // namespace gpumemtrace::interpose
