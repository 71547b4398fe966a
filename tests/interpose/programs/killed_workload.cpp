// Allocates N buffers, reports each as it returns, then dies by SIGKILL without any chance to clean up.
#include <cuda_runtime_api.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>

#include "tests/support/program_check.h"

int main(int argc, char** argv) {
  int count = argc > 1 ? std::atoi(argv[1]) : 100;
  for (int i = 0; i < count; ++i) {
    void* ptr = nullptr;
    CHECK_OK(cudaMalloc(&ptr, static_cast<size_t>(4096 + i)));
  }
  std::printf("allocated %d\n", count);
  std::fflush(stdout);
  raise(SIGKILL);
  return 0;
}
