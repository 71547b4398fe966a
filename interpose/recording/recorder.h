// The recorder: turns what the hooks saw into trace records. One per process; thread-safe.
// Hooks call it only after the real allocation succeeded and before the real free runs.
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
  bool busy = false;             // the tracer itself is running: hooks pass straight through
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

// False when this process is not traced (not followed, or the trace could not be written).
bool recording_enabled();
// Whether a hook should record: the process is traced and the tracer itself is not the caller.
inline bool tracing_active() { return !hook_state().busy && recording_enabled(); }

void record_alloc(format::Api api, int device, uint64_t address, uint64_t size, uint64_t stream = 0,
                  uint64_t pool = 0);
void record_free(format::Api api, uint64_t address, uint64_t stream = 0);
void record_free_failed(format::Api api, uint64_t address, uint64_t error);
// For out-of-memory errors, free/total are the device's at that moment.
void record_alloc_failed(format::Api api, int device, uint64_t size, uint64_t error, uint64_t free_bytes,
                         uint64_t total_bytes);
void record_mem_map(uint64_t address, uint64_t size, uint64_t handle, uint64_t offset);
void record_mem_unmap(uint64_t address, uint64_t size);
void record_address_reserve(uint64_t address, uint64_t size);
void record_address_free(uint64_t address, uint64_t size);
void record_pool_create(uint64_t pool, int device);
void record_pool_destroy(uint64_t pool);
void record_pool_trim(uint64_t pool, uint64_t min_keep, uint64_t reserved, uint64_t used);
void record_pool_usage(uint64_t pool, int device, uint64_t reserved, uint64_t used);
void record_mem_info(int device, uint64_t free_bytes, uint64_t total_bytes);

// Pushes what was written to the disk: after an out-of-memory failure, the process may be about to die.
void sync_trace();

// Starts the recorder early (library constructor); everything else starts it on first use too.
void start_recorder();
// Writes the End record (library destructor).
void finish_recorder();

}  // namespace gpumemtrace::interpose
