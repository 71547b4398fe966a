// What a replay tells about each allocation it takes, in trace order, for the outputs that need every
// allocation rather than the sums the replay keeps (the CSV rows, the largest allocations of a Perfetto
// trace). An allocation is named by a key, unique while it is live (its address and address space).
#pragma once

#include <cstdint>

#include "analyzer/replay/stack_table.h"
#include "trace/reader/records.h"

namespace gpumemtrace::replay {

struct AllocationEvent {
  uint64_t key = 0;
  uint64_t time_ns = 0;
  trace::Api api{};
  trace::MemoryKind kind{};
  int32_t device = trace::kNoDevice;
  uint64_t address = 0;
  uint64_t size = 0;
  StackId stack = 0;
  uint64_t stream = 0;  // the stream a stream-ordered allocation (cudaMallocAsync, ...) was made on; else 0
};

class AllocationListener {
 public:
  virtual ~AllocationListener() = default;
  virtual void allocated(const AllocationEvent& allocation) = 0;
  // Freed, or dropped because another allocation took its address (its free is missing from the trace).
  virtual void freed(uint64_t key, uint64_t time_ns) = 0;
  // The driver refused the free just recorded: the allocation is live again.
  virtual void restored(uint64_t key, uint64_t time_ns) = 0;
};

}  // namespace gpumemtrace::replay
