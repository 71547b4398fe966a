// A fixed sequence of runtime allocations with known sizes, kinds and a known call site.
// Built twice: against NVIDIA's shared libcudart (run on the simulated one) and against the simulated
// static runtime, where only the driver hook chain can see it.
#include <cuda_runtime_api.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "tests/support/program_check.h"

// The allocation site tests look for in the stack.
extern "C" __attribute__((noinline)) void* known_allocation_site(size_t bytes) {
  void* ptr = nullptr;
  CHECK_OK(cudaMalloc(&ptr, bytes));
  __asm__ volatile("" ::: "memory");  // keep the call from becoming a tail call
  return ptr;
}

int main(int argc, char** argv) {
  bool oom = argc > 1 && std::strcmp(argv[1], "--oom") == 0;
  std::printf("known_allocation_site %p\n", reinterpret_cast<void*>(&known_allocation_site));

  void* a = known_allocation_site(1 << 20);
  void* b = nullptr;
  CHECK_OK(cudaMalloc(&b, 3000));
  void* managed = nullptr;
  CHECK_OK(cudaMallocManaged(&managed, 4096, cudaMemAttachGlobal));
  void* host = nullptr;
  CHECK_OK(cudaMallocHost(&host, 8192));
  cudaStream_t stream = nullptr;
  CHECK_OK(cudaStreamCreate(&stream));
  void* async = nullptr;
  CHECK_OK(cudaMallocAsync(&async, 1 << 21, stream));
  CHECK_OK(cudaFreeAsync(async, stream));
  CHECK_OK(cudaStreamSynchronize(stream));
  size_t free_bytes = 0, total_bytes = 0;
  CHECK_OK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::printf("meminfo %zu %zu\n", free_bytes, total_bytes);
  if (oom) {
    void* huge = nullptr;
    CHECK_EQ(cudaMalloc(&huge, total_bytes + (size_t{1} << 30)), cudaErrorMemoryAllocation);
    std::printf("oom requested %zu\n", total_bytes + (size_t{1} << 30));
  }
  CHECK_OK(cudaFree(b));
  CHECK_OK(cudaFreeHost(host));
  CHECK_OK(cudaFree(managed));
  CHECK_OK(cudaStreamDestroy(stream));
  void* leaked = nullptr;
  CHECK_OK(cudaMalloc(&leaked, 5000));
  std::printf("leaked %p %p\n", a, leaked);
  return 0;
}
