// Which events a replay takes (the export command's --device, --from, --to and --min-size): the rest are
// left out before anything is counted, so every figure of the replay is about the selected allocations.
//
//   an allocation is taken when it was made in [from_ns, to_ns], on the device (device memory only: a
//     --device leaves managed and pinned host memory out) and of at least min_size bytes; the free of an
//     allocation left out is left out with it, silently;
//   a failed allocation is taken when it was made in the window, on the device (whatever its size);
//   every record after to_ns is left out: what was live at to_ns stays live, and the replay ends there;
//   phases, pools, heaps and memory information before from_ns are kept, as the state the window starts in.
#pragma once

#include <cstdint>
#include <optional>

#include "analyzer/replay/accounts.h"

namespace gpumemtrace::replay {

struct EventSelection {
  std::optional<int32_t> device = std::nullopt;
  uint64_t from_ns = 0;
  uint64_t to_ns = UINT64_MAX;
  uint64_t min_size = 0;

  bool selects_everything() const { return !device && from_ns == 0 && to_ns == UINT64_MAX && min_size == 0; }
  bool in_window(uint64_t time_ns) const { return time_ns >= from_ns && time_ns <= to_ns; }
  bool on_device(trace::MemoryKind kind, int32_t event_device) const {
    return !device || (format::memory_category(kind) == Category::Device && event_device == *device);
  }
  bool takes_allocation(uint64_t time_ns, trace::MemoryKind kind, int32_t event_device, uint64_t size) const {
    return in_window(time_ns) && on_device(kind, event_device) && size >= min_size;
  }
  bool takes_failure(uint64_t time_ns, trace::MemoryKind kind, int32_t event_device) const {
    return in_window(time_ns) && on_device(kind, event_device);
  }
};

}  // namespace gpumemtrace::replay
