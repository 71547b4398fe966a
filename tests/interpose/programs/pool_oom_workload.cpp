// Frees 512 MiB into the device's default pool without synchronizing (the pool keeps it reserved), then
// asks cudaMalloc for 768 MiB on a 1 GiB device: out of memory while the pool holds memory nobody uses.
#include <cuda_runtime_api.h>

#include <cstdio>

#include "tests/support/program_check.h"

int main() {
  cudaStream_t stream = nullptr;
  CHECK_OK(cudaStreamCreate(&stream));
  void* cached = nullptr;
  CHECK_OK(cudaMallocAsync(&cached, size_t{512} << 20, stream));
  CHECK_OK(cudaFreeAsync(cached, stream));
  void* big = nullptr;
  CHECK_EQ(cudaMalloc(&big, size_t{768} << 20), cudaErrorMemoryAllocation);
  cudaMemPool_t pool = nullptr;
  CHECK_OK(cudaDeviceGetDefaultMemPool(&pool, 0));
  std::printf("default_pool %p\n", static_cast<void*>(pool));
  return 0;
}
