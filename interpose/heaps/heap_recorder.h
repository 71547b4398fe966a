// Heap and sub-allocation records (docs/trace-format.md, "Heaps") from any source: annotate.h's entry points
// (interpose/annotate/) and the NVTX memory extension (interpose/nvtx/). Each call records when the process
// is traced and the tracer is not the caller, and does nothing otherwise.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpumemtrace::interpose::heaps {

// A new heap id (never 0), recorded with the heap's device (-1: not said), memory (size 0: not said) and
// name. Ids are handed out even when nothing is recorded, so that a program's handles stay distinct.
uint64_t create(std::string_view name, int32_t device, uint64_t address, uint64_t size);
void destroy(uint64_t heap);
void reset(uint64_t heap);
// A block of `size` bytes asked for (`reserved`: what the allocator set aside for it; 0: not said), with the
// calling thread's stack.
void suballoc(uint64_t heap, uint64_t address, uint64_t size, uint64_t reserved);
void subfree(uint64_t heap, uint64_t address);
// The live block at `address` in `heap` holds `name` (what it is for).
void name(uint64_t heap, uint64_t address, std::string_view name);

}  // namespace gpumemtrace::interpose::heaps
