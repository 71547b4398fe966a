// The pieces the report models share: which memory a figure is about, an account's totals, and a site's
// bytes with its stack.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "analyzer/replay/accounts.h"
#include "analyzer/replay/stack_table.h"

namespace gpumemtrace::report {

enum class Memory : uint8_t { Device, Managed, HostPinned };

// "device", "managed", "host-pinned"
std::string_view memory_name(Memory memory);

// Which allocations the reports count where a program's allocator reported heaps (docs/reports.md,
// "Views"): the driver's, heap segments whole (reserved), or the allocator's blocks in place of the
// segments that hold them (used). Without heaps both are the same.
enum class View : uint8_t { Reserved, Used };

// "reserved", "used"
std::string_view view_name(View view);
std::optional<View> view_named(std::string_view name);
Memory memory_of(replay::Category category);
std::optional<int32_t> device_of(int32_t device);  // none for trace::kNoDevice

// after - before, clamped to the range of int64_t: the figures of a damaged trace or an edited baseline may
// be anywhere in uint64_t, where subtracting them as int64_t overflows or gives the wrong sign.
inline int64_t signed_change(uint64_t before, uint64_t after) {
  constexpr uint64_t kLargest = std::numeric_limits<int64_t>::max();
  if (after >= before) return static_cast<int64_t>(std::min(after - before, kLargest));
  return -static_cast<int64_t>(std::min(before - after, kLargest));
}

// One account: a device's memory, or all managed or all pinned host memory (docs/reports.md).
// Its figures, declared once for the struct, the JSON writer (same names, in this order) and the contract
// test. X(member, in JSON).
#define GPUMEMTRACE_ACCOUNT_FIGURES(X)                                                     \
  X(peak_bytes, true) /* the first time the maximum was reached */                           \
  X(peak_time_ns, true)                                                                      \
  X(peak_count, false)                                                                       \
  X(final_bytes, true) /* live when the trace ends */                                        \
  X(final_count, false)                                                                      \
  X(allocations, true)                                                                       \
  X(frees, true)                                                                             \
  X(leaked_allocations, true) /* final_count for a complete trace, else 0 */                 \
  X(failed_allocations, true)
struct AccountFigures {
  Memory memory = Memory::Device;
  std::optional<int32_t> device;  // none for managed and pinned host memory (and an unknown device)
#define GPUMEMTRACE_FIGURE_MEMBER(member, in_json) uint64_t member = 0;
  GPUMEMTRACE_ACCOUNT_FIGURES(GPUMEMTRACE_FIGURE_MEMBER)
#undef GPUMEMTRACE_FIGURE_MEMBER
};

// What one site (a stack on one device or memory) held at the moment a report is about.
struct SiteFigures {
  Memory memory = Memory::Device;
  std::optional<int32_t> device;
  uint64_t bytes = 0;
  uint64_t count = 0;
  replay::StackId stack = 0;
};

}  // namespace gpumemtrace::report
