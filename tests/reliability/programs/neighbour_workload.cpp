// Plain cudaMalloc/cudaFree: argv[1] allocations of (i + 1) MiB + 1000 bytes, all live at once, then freed.
// Run with a neighbour library preloaded that implements them with the VMM API (vmm_neighbour.cpp).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tests/support/program_check.h"

int main(int argc, char** argv) {
  int count = argc > 1 ? std::atoi(argv[1]) : 10;
  CHECK_OK(cudaFree(nullptr));
  std::vector<void*> live(count);
  for (int i = 0; i < count; ++i) CHECK_OK(cudaMalloc(&live[i], static_cast<size_t>((i + 1) << 20) + 1000));
  for (void* ptr : live) CHECK_OK(cudaFree(ptr));
  std::printf("done %d\n", count);
  return 0;
}
