// The calling thread's state shared by the runtime and driver hooks, and the tracer's own "busy" mark.
#pragma once

#include <cerrno>
#include <cstdint>

#include "gpumemtrace/trace_format.h"

namespace gpumemtrace::interpose {

// Per-thread state shared by the runtime and driver hooks, so that one logical allocation made through
// cudaMalloc → cuMemAlloc_v2 is recorded once, under the API the application called.
struct HookState {
  format::Api runtime_api = format::Api::Count;  // set while inside a runtime hook
  int runtime_depth = 0;
  uint64_t runtime_size = 0;     // the size the runtime call asked for (0: not comparable)
  uint64_t runtime_address = 0;  // the address the runtime call frees
  bool recorded = false;         // the current runtime call's event is already in the trace
  // The last range cuMemMap mapped inside the current runtime call: a neighbour library that serves
  // cudaMalloc with the VMM API (torch_memory_saver) hands out addresses in such ranges.
  uint64_t mapped_low = 0, mapped_high = 0;
  bool busy = false;             // the tracer itself is running: hooks pass straight through
  int driver_wrapper_depth = 0;  // inside a driver wrapper that records this call (CUPTI drops its copy)
};
HookState& hook_state();

// Marks the tracer busy for the scope, so CUDA calls it makes itself are not traced. The program may read
// errno after a CUDA call, so whatever the tracer does in the scope leaves errno as it found it.
class BusyGuard {
 public:
  BusyGuard() : state_(hook_state()), was_busy_(state_.busy), saved_errno_(errno) { state_.busy = true; }
  ~BusyGuard() {
    state_.busy = was_busy_;
    errno = saved_errno_;
  }
  BusyGuard(const BusyGuard&) = delete;
  BusyGuard& operator=(const BusyGuard&) = delete;
  bool nested() const { return was_busy_; }

 private:
  HookState& state_;
  bool was_busy_;
  int saved_errno_;
};

}  // namespace gpumemtrace::interpose
