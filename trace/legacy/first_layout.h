// The first layout of version 1, written by the first commit's tracer (67be820, 2026-11-22) and changed by
// the next commit without a new version number: every event carried its own time delta, an Alloc its device
// and its absolute size. docs/trace-format.md ("Versions") tells the two apart; here a trace in the first
// layout is told by its records and rewritten in today's layout, which every reading then reads, as a packed
// trace is unpacked (trace/reader/opened_trace.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gpumemtrace::legacy {

// How far, as a byte offset, the first layout reads the trace without damage, looking no further than 256
// events past the first; 0 when no event reads. The caller compares it with how far today's layout reads:
// a trace the first layout reads further than today's is of the first layout (it wrote no Time or Device
// record, and its Alloc begins with a small device number where today's begins with an address).
size_t first_layout_reach(std::span<const uint8_t> trace);

// The trace in today's layout of version 1: Time and Device records where the events carried their time and
// device, sizes as deltas per stack, the other records as they were. A trace cut short ends where it was
// cut; at damage, the rest of the bytes follow as they are, so the reading stops there as corrupt.
std::vector<uint8_t> to_current_layout(std::span<const uint8_t> trace);

// The same, in a memory file (memfd) for a mapping: its descriptor, which the caller closes.
int to_current_layout_in_memory_file(std::span<const uint8_t> trace);

}  // namespace gpumemtrace::legacy
