// Where a memory kind's bytes live, the accounts the analyzer adds them up in: device memory (each device),
// managed memory, pinned host memory. Both the importers (the snapshot join) and the replay model use it.
#pragma once

#include <cstdint>

#include "gpumemtrace/trace_format.h"

namespace gpumemtrace::format {

enum class MemoryCategory : uint8_t { Device, Managed, HostPinned };

inline constexpr MemoryCategory memory_category(MemoryKind kind) {
  if (kind == MemoryKind::Managed) return MemoryCategory::Managed;
  return kind == MemoryKind::HostPinned ? MemoryCategory::HostPinned : MemoryCategory::Device;
}

}  // namespace gpumemtrace::format
