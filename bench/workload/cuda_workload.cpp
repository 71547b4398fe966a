// The capture benchmark's CUDA workload: cudaMalloc/cudaFree in the shape of workload_shape.h, run on the
// simulated device (or a real one) with and without libgpumemtrace.so.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "bench/workload/workload_shape.h"

namespace {

void check(cudaError_t rc, const char* what) {
  if (rc == cudaSuccess) return;
  std::fprintf(stderr, "cuda_workload: %s failed: %s\n", what, cudaGetErrorString(rc));
  std::exit(1);
}

struct CudaAllocator {
  void* allocate(size_t size) {
    void* p = nullptr;
    check(cudaMalloc(&p, size), "cudaMalloc");
    return p;
  }
  void release(void* p) { check(cudaFree(p), "cudaFree"); }
};

}  // namespace

int main(int argc, char** argv) {
  auto options = gpumemtrace::bench::parse_workload_options(argc, argv);
  check(cudaFree(nullptr), "cudaFree(nullptr)");  // the context exists before the threads start
  gpumemtrace::bench::run_workload(options, [] { return CudaAllocator{}; });
  return 0;
}
