#include "interpose/stack_capture.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <link.h>

namespace gpumemtrace::interpose {

namespace {

struct AddressRange {
  uintptr_t low = 0;
  uintptr_t high = 0;
};

// The address range of this library's loaded segments: frames inside it are the tracer's own.
AddressRange own_range() {
  struct Search {
    uintptr_t probe;
    AddressRange range;
  } search{reinterpret_cast<uintptr_t>(&own_range), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        AddressRange range{UINTPTR_MAX, 0};
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
          uintptr_t low = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
          uintptr_t high = low + info->dlpi_phdr[i].p_memsz;
          if (low < range.low) range.low = low;
          if (high > range.high) range.high = high;
        }
        if (s->probe < range.low || s->probe >= range.high) return 0;
        s->range = range;
        return 1;
      },
      &search);
  return search.range;
}

const AddressRange& tracer_range() {
  static const AddressRange range = own_range();
  return range;
}

}  // namespace

size_t capture_stack(uintptr_t* out, size_t max_depth) {
  const AddressRange& own = tracer_range();
  void* frames[kMaxStackDepth + 16];
  size_t want = max_depth + 16 < kMaxStackDepth + 16 ? max_depth + 16 : kMaxStackDepth + 16;
  int n = unw_backtrace(frames, static_cast<int>(want));
  size_t count = 0;
  // The tracer's frames are dropped wherever they are: on top, and where a runtime hook called the runtime.
  for (int i = 0; i < n && count < max_depth; ++i) {
    auto ip = reinterpret_cast<uintptr_t>(frames[i]);
    if (ip >= own.low && ip < own.high) continue;
    out[count++] = ip - 1;
  }
  return count;
}

}  // namespace gpumemtrace::interpose
