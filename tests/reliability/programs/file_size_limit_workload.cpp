// Lowers its own file size limit (RLIMIT_FSIZE) to argv[1] bytes, the way a full quota or a job's limit
// stops a trace mid-run, then makes argv[2] cudaMalloc/cudaFree pairs of sizes 4096 + i % 1000.
#include <cuda_runtime_api.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>

#include "tests/support/program_check.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  rlim_t limit = std::strtoull(argv[1], nullptr, 10);
  long pairs = std::atol(argv[2]);
  CHECK_OK(cudaFree(nullptr));
  rlimit fsize{limit, limit};
  CHECK_OK(setrlimit(RLIMIT_FSIZE, &fsize));
  for (long i = 0; i < pairs; ++i) {
    void* ptr = nullptr;
    CHECK_OK(cudaMalloc(&ptr, static_cast<size_t>(4096 + i % 1000)));
    CHECK_OK(cudaFree(ptr));
  }
  std::printf("done %ld\n", pairs);
  return 0;
}
