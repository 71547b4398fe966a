// The capture benchmark's host workload: malloc/free in the shape of workload_shape.h, the same pattern the
// CUDA workload makes, for heaptrack to trace.
#include <cstdio>
#include <cstdlib>

#include "bench/workload/workload_shape.h"

namespace {

struct MallocAllocator {
  void* allocate(size_t size) {
    void* p = std::malloc(size);
    if (!p) {
      std::fprintf(stderr, "malloc_workload: out of memory\n");
      std::exit(1);
    }
    return p;
  }
  void release(void* p) { std::free(p); }
};

}  // namespace

int main(int argc, char** argv) {
  auto options = gpumemtrace::bench::parse_workload_options(argc, argv);
  gpumemtrace::bench::run_workload(options, [] { return MallocAllocator{}; });
  return 0;
}
