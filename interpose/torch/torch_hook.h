// The PyTorch hook: in a traced Python process that uses torch, the tracer starts the Python module
// python/gpumemtrace/torch_hook.py once, on the main thread with the GIL (Py_AddPendingCall), so that PyTorch
// records its allocation history and snapshots of its caching allocator are written next to the trace
// (docs/capture.md, "PyTorch"). The interpreter is found by symbol name at run time, as the frame walker finds
// it (interpose/stacks/python); no hook ever takes the GIL.
#pragma once

#include <cstdint>

namespace gpumemtrace::interpose::torch {

// Library constructor: finds the Python module beside the library, unless GPUMEMTRACE_TORCH=0.
void prepare();

// After each recorded allocation, outside the recorder's lock: the first one in a process with an initialized
// interpreter schedules the hook. One atomic load once that is done.
void on_allocation();

// What the Python module tells the trace (its entry points in interpose/annotate/annotate_entries.cpp).
void record_hook_on(const char* torch_version, uint64_t history_entries, int usr1);
struct SnapshotWritten {
  int reason = 0;  // format::TorchSnapshotReason
  uint64_t sequence = 0;
  const char* file = nullptr;
  uint64_t taken_monotonic_ns = 0;  // CLOCK_MONOTONIC, as Python's time.monotonic_ns()
  uint64_t taken_wall_ns = 0;
  int device = -1;  // out of memory only, with the three below
  uint64_t size = 0;
  uint64_t device_total = 0;
  uint64_t device_free = 0;
};
void record_snapshot_written(const SnapshotWritten& snapshot);

}  // namespace gpumemtrace::interpose::torch
