// A trace with heaps for the used view read alongside the first reading (used_alongside_test.cpp and, under
// ThreadSanitizer, used_alongside_threads_test.cpp).
#pragma once

#include <cstdint>

#include "tests/support/trace_builder.h"

namespace gpumemtrace::test {

// `segments` segments one after the other at 16 addresses, each a cudaMalloc whose heap comes `heap_after`
// records later (the first's next to it) (plain allocations of 4 KiB made and freed between), with two blocks of different stacks,
// one freed before the segment goes; every 7th segment stays. A workspace allocated first lives to the end
// and is never heap memory; every 5th plain allocation is at an address a segment held before.
inline TraceBuilder heaps_trace(uint32_t segments, uint32_t heap_after) {
  using format::Api;
  constexpr uint64_t kMiB = 1 << 20, kWorkspace = 0x7000000000;
  TraceBuilder b;
  uint64_t events = 0;
  b.thread_new(1, 1, "main");
  for (uint64_t ip : {0xA000, 0xB000, 0xC000, 0xD000}) b.stack_node(0, ip);
  b.alloc(Api::cudaMalloc, 0, kWorkspace, 3 * kMiB, 3, 1000);
  ++events;
  for (uint32_t i = 0; i < segments; ++i) {
    uint64_t heap = i + 1;
    uint64_t segment = 0x100000000 + (i % 16) * 4 * kMiB + (i % 7 == 0 ? (i + 16) * 64 * kMiB : 0);
    b.alloc(Api::cudaMalloc, 0, segment, 2 * kMiB, 1, 1000);
    for (uint32_t k = 0; k < (i == 0 ? 0 : heap_after); ++k) {
      uint64_t plain = k % 5 == 0 ? 0x100000000 + ((i + 1) % 16) * 4 * kMiB : 0x6000000000 + k * 4096;
      b.alloc(Api::cudaMalloc, 0, plain, 4096, 3, 10);
      b.free(Api::cudaFree, plain, 10);
      events += 2;
    }
    b.event(trace::HeapCreate{{}, heap, 0, segment, 2 * kMiB, "pool"}, 100);
    b.event(trace::SubAlloc{{}, heap, segment, 1000 + i, 1024 + i, 2}, 100);
    b.event(trace::SubAlloc{{}, heap, segment + kMiB, 5000, 8192, 4}, 100);
    b.event(trace::SubFree{{}, heap, segment}, 100);
    events += 5;
    if (i % 7 == 0) continue;
    b.event(trace::SubFree{{}, heap, segment + kMiB}, 100);
    b.event(trace::HeapDestroy{{}, heap}, 100);
    b.free(Api::cudaFree, segment, 100);
    events += 3;
  }
  return b.end(events + 1, 1000);
}

}  // namespace gpumemtrace::test
