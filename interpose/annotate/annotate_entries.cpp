// The entry points include/gpumemtrace/annotate.h and the Python module (python/gpumemtrace) look up by
// name. Their phases are NVTX's default-domain push/pop ranges: one per-thread stack for both. Their heaps
// and blocks are the same records as the NVTX memory extension's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "interpose/heaps/heap_recorder.h"
#include "interpose/nvtx/phase_recorder.h"
#include "interpose/recording/recorder.h"

using namespace gpumemtrace::interpose;

#define GMT_EXPORT extern "C" __attribute__((visibility("default")))

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
