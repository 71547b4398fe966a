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
struct AccountFigures {
  Memory memory = Memory::Device;
  std::optional<int32_t> device;  // none for managed and pinned host memory (and an unknown device)
  uint64_t peak_bytes = 0;        // the first time the maximum was reached
  uint64_t peak_time_ns = 0;
  uint64_t peak_count = 0;
  uint64_t final_bytes = 0;       // live when the trace ends
  uint64_t final_count = 0;
  uint64_t leaked_allocations = 0;  // final_count for a complete trace, else 0
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t failed_allocations = 0;
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
