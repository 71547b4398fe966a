#include "interpose/heaps/heap_recorder.h"

#include <atomic>

#include "interpose/recording/recorder.h"

namespace gpumemtrace::interpose::heaps {

namespace {

std::atomic<uint64_t> g_heaps{0};

template <typename R>
void record_if_traced(R event) {
  if (tracing_active()) record(event);
}

}  // namespace

uint64_t create(std::string_view name, int32_t device, uint64_t address, uint64_t size) {
  uint64_t heap = g_heaps.fetch_add(1, std::memory_order_relaxed) + 1;
  record_if_traced(trace::HeapCreate{{}, heap, device < 0 ? trace::kNoDevice : device, address, size, name});
  return heap;
}

void destroy(uint64_t heap) { record_if_traced(trace::HeapDestroy{{}, heap}); }

void reset(uint64_t heap) { record_if_traced(trace::HeapReset{{}, heap}); }

void suballoc(uint64_t heap, uint64_t address, uint64_t size, uint64_t reserved) {
  record_if_traced(trace::SubAlloc{{}, heap, address, size, reserved});
}

void subfree(uint64_t heap, uint64_t address) { record_if_traced(trace::SubFree{{}, heap, address}); }

void name(uint64_t heap, uint64_t address, std::string_view name) {
  record_if_traced(trace::SubName{{}, heap, address, name});
}

}  // namespace gpumemtrace::interpose::heaps
