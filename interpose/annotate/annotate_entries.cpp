// The entry points include/gpumemtrace/annotate.h and the Python module (python/gpumemtrace) look up by
// name. Their phases are NVTX's default-domain push/pop ranges: one per-thread stack for both. Their heaps
// and blocks are the same records as the NVTX memory extension's. The PyTorch hook (torch_hook.py) logs and
// tells the trace what it did through gpumemtrace_log and the gpumemtrace_torch_ entries.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "interpose/heaps/heap_recorder.h"
#include "interpose/hooks/wrapper_helpers.h"
#include "interpose/phases/phase_recorder.h"
#include "interpose/base/debug_log.h"
#include "interpose/recording/recorder.h"
#include "interpose/torch/torch_hook.h"

using namespace gpumemtrace::interpose;


GMT_EXPORT void gpumemtrace_phase_push(const char* name) { phases::push(nullptr, name ? name : ""); }

GMT_EXPORT void gpumemtrace_phase_pop() { phases::pop(nullptr); }

GMT_EXPORT uint64_t gpumemtrace_heap_create(const char* name, int device, const void* base, size_t size) {
  return heaps::create(name ? name : "", device, reinterpret_cast<uintptr_t>(base), size);
}

GMT_EXPORT void gpumemtrace_heap_destroy(uint64_t heap) { heaps::destroy(heap); }

GMT_EXPORT void gpumemtrace_heap_reset(uint64_t heap) { heaps::reset(heap); }

GMT_EXPORT void gpumemtrace_suballoc(uint64_t heap, const void* block, size_t size, size_t reserved) {
  heaps::suballoc(heap, reinterpret_cast<uintptr_t>(block), size, reserved);
}

GMT_EXPORT void gpumemtrace_subfree(uint64_t heap, const void* block) {
  heaps::subfree(heap, reinterpret_cast<uintptr_t>(block));
}

GMT_EXPORT void gpumemtrace_suballoc_name(uint64_t heap, const void* block, const char* name) {
  heaps::name(heap, reinterpret_cast<uintptr_t>(block), name ? name : "");
}

// One line in the tracer's debug log, or on stderr for a warning the user must see.
GMT_EXPORT void gpumemtrace_log(int warning, const char* message) {
  if (!message) return;
  if (warning)
    warn("%s", message);
  else
    debug_log("%s", message);
}

GMT_EXPORT void gpumemtrace_torch_hook(const char* torch_version, uint64_t history_entries, int usr1) {
  torch::record_hook_on(torch_version, history_entries, usr1);
}

GMT_EXPORT void gpumemtrace_torch_snapshot(int reason, uint64_t sequence, const char* file, uint64_t taken_monotonic_ns,
                                           uint64_t taken_wall_ns, int device, uint64_t size, uint64_t device_total,
                                           uint64_t device_free) {
  torch::record_snapshot_written(
      {reason, sequence, file, taken_monotonic_ns, taken_wall_ns, device, size, device_total, device_free});
}

// The path of the trace this process writes, copied into `buffer` (`size` bytes, NUL included, cut to fit
// as snprintf does); returns its length, 0 when the process is not traced. The pytest plugin reads the
// trace it is writing with it (python/gpumemtrace/pytest_plugin.py).
GMT_EXPORT size_t gpumemtrace_trace_path(char* buffer, size_t size) {
  std::string path = trace_path();
  if (buffer && size) {
    size_t copied = std::min(path.size(), size - 1);
    std::memcpy(buffer, path.data(), copied);
    buffer[copied] = '\0';
  }
  return path.size();
}
