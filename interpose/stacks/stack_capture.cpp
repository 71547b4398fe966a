#include "interpose/stacks/stack_capture.h"

#include "gpumemtrace/trace_format.h"
#include "interpose/base/loader_walk.h"
#include "interpose/stacks/module_map.h"
#include "interpose/stacks/native/fast_unwind.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

namespace gpumemtrace::interpose {

namespace {

// This library's loaded segments: frames inside them are the tracer's own.
const CodeRange& tracer_range() {
  static const CodeRange range = [] {
    trace::ModuleInfo own = module_containing(reinterpret_cast<uintptr_t>(&capture_stack));
    return CodeRange{own.low, own.high};
  }();
  return range;
}

// libunwind's walk, for stacks the fast walker does not understand (signal frames, code without unwind
// tables). Unlike the fast walker's, its addresses were not all checked against unwind tables: one that
// cannot be code of the program (0, a kernel address) is dropped, because the trace reserves bit 63 for
// frames that are not addresses (format::kTaggedFrame).
long slow_backtrace(uintptr_t* frames, size_t want) {
  long n = with_loader_walk([&] { return unw_backtrace(reinterpret_cast<void**>(frames), static_cast<int>(want)); });
  long kept = 0;
  for (long i = 0; i < n; ++i)
    if (!format::is_tagged_frame(frames[i] - 1)) frames[kept++] = frames[i];
  return kept;
}

}  // namespace

size_t capture_stack(uintptr_t* out, size_t max_depth, bool* cut) {
  const CodeRange& own = tracer_range();
  uintptr_t frames[kMaxStackDepth + 16];
  size_t want = max_depth + 16 < kMaxStackDepth + 16 ? max_depth + 16 : kMaxStackDepth + 16;
  long n = fast_backtrace(frames, want);
  if (n < 0) n = slow_backtrace(frames, want);
  size_t count = 0;
  long i = 0;
  // The tracer's frames are dropped wherever they are: on top, and where a runtime hook called the runtime.
  for (; i < n && count < max_depth; ++i) {
    uintptr_t ip = frames[i];
    if (own.contains(ip)) continue;
    out[count++] = ip - 1;
  }
  if (cut) {
    *cut = static_cast<size_t>(n) == want;  // the walk stopped at `want`: there may be more
    for (; i < n && !*cut; ++i) *cut = !own.contains(frames[i]);
  }
  return count;
}

}  // namespace gpumemtrace::interpose
