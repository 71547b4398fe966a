// N threads, each doing M cudaMalloc/cudaFree pairs of distinct sizes, all at once.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "tests/support/program_check.h"

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 16;
  int pairs = argc > 2 ? std::atoi(argv[2]) : 1000;
  CHECK_OK(cudaFree(nullptr));  // create the context before the threads start
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([t, pairs] {
      for (int i = 0; i < pairs; ++i) {
        void* ptr = nullptr;
        CHECK_OK(cudaMalloc(&ptr, static_cast<size_t>(1024 * (t + 1) + i % 7)));
        CHECK_OK(cudaFree(ptr));
      }
    });
  }
  for (auto& worker : workers) worker.join();
  std::printf("done %d\n", threads * pairs);
  return 0;
}
