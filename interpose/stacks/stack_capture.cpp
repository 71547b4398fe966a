#include "interpose/stacks/stack_capture.h"

#include "interpose/stacks/native/fast_unwind.h"
#include "interpose/stacks/module_map.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

namespace gpumemtrace::interpose {

namespace {

struct CodeRange {
  uintptr_t low = 0;
  uintptr_t high = 0;
};

// This library's loaded segments: frames inside them are the tracer's own.
const CodeRange& tracer_range() {
  static const CodeRange range = [] {
    trace::ModuleInfo own = module_containing(reinterpret_cast<uintptr_t>(&capture_stack));
    return CodeRange{own.low, own.high};
  }();
  return range;
}

}  // namespace

size_t capture_stack(uintptr_t* out, size_t max_depth) {
  const CodeRange& own = tracer_range();
  uintptr_t frames[kMaxStackDepth + 16];
  size_t want = max_depth + 16 < kMaxStackDepth + 16 ? max_depth + 16 : kMaxStackDepth + 16;
  long n = fast_backtrace(frames, want);
  // libunwind for stacks the fast walker does not understand (signal frames, code without unwind tables).
  if (n < 0) n = unw_backtrace(reinterpret_cast<void**>(frames), static_cast<int>(want));
  size_t count = 0;
  // The tracer's frames are dropped wherever they are: on top, and where a runtime hook called the runtime.
  for (long i = 0; i < n && count < max_depth; ++i) {
    uintptr_t ip = frames[i];
    if (ip >= own.low && ip < own.high) continue;
    out[count++] = ip - 1;
  }
  return count;
}

}  // namespace gpumemtrace::interpose
