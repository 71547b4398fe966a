// A workload with known figures for the reports (tests/analyzer/program_reports_test.cpp):
//   weights   2 x 4 MiB at the start (one call site); the second is freed at the end, the first leaks
//   scratch   16 MiB allocated and freed in each of 10 steps
//   history   1 MiB kept in each of 10 steps: grows, and leaks (10 MiB)
//   managed   64 KiB managed memory, leaked; pinned 128 KiB host memory, freed
// The peak of device 0 is in the last step, after its history allocation: 4 + 4 + 16 + 10 = 34 MiB.
// Each step sleeps 20 ms so that the steps spread over the trace's time slices, and the program waits 40 ms
// after the last step, so the last slice starts after the last history allocation. (With 2 ms, a start that
// took 30 ms on a loaded machine, NVIDIA's runtime loading and finding the driver, squeezed the steps into a
// few slices and the history no longer grew in most of them.)
// The lines marked "// site:" are the call sites the symbolization test looks for.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include "tests/support/program_check.h"

namespace {
constexpr size_t kMiB = size_t{1} << 20;
}

extern "C" __attribute__((noinline)) void* alloc_weights(size_t bytes) {
  void* ptr = nullptr;
  CHECK_OK(cudaMalloc(&ptr, bytes));  // site: weights
  __asm__ volatile("" ::: "memory");  // keep the call from becoming a tail call
  return ptr;
}

extern "C" __attribute__((noinline)) void* alloc_scratch(size_t bytes) {
  void* ptr = nullptr;
  CHECK_OK(cudaMalloc(&ptr, bytes));  // site: scratch
  __asm__ volatile("" ::: "memory");
  return ptr;
}

extern "C" __attribute__((noinline)) void* alloc_history(size_t bytes) {
  void* ptr = nullptr;
  CHECK_OK(cudaMalloc(&ptr, bytes));  // site: history
  __asm__ volatile("" ::: "memory");
  return ptr;
}

int main() {
  void* weights[2];
  volatile int layers = 2;  // a loop the compiler does not unroll: one call site for both
  for (int i = 0; i < layers; ++i) weights[i] = alloc_weights(4 * kMiB);  // site: main-weights
  for (int step = 0; step < 10; ++step) {
    void* scratch = alloc_scratch(16 * kMiB);
    alloc_history(kMiB);  // site: main-history
    CHECK_OK(cudaFree(scratch));
    usleep(20000);
  }
  usleep(40000);
  void* managed = nullptr;
  CHECK_OK(cudaMallocManaged(&managed, 64 * 1024, cudaMemAttachGlobal));
  void* pinned = nullptr;
  CHECK_OK(cudaMallocHost(&pinned, 128 * 1024));
  CHECK_OK(cudaFreeHost(pinned));
  CHECK_OK(cudaFree(weights[1]));
  return 0;
}
