// N threads allocate and free until killed. After each cudaMalloc returns, the thread appends the size
// it asked for (unique to the thread and the call) to the acknowledgement log argv[1] with one write(2):
// what the log holds, the program was told had succeeded. Sizes: thread t, call i -> (i * N + t + 1) * 16.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "tests/support/program_check.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int log = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return 3;
  int threads = std::atoi(argv[2]);
  CHECK_OK(cudaFree(nullptr));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([t, threads, log] {
      std::vector<void*> live;
      for (uint64_t i = 0;; ++i) {
        void* ptr = nullptr;
        uint64_t size = (i * threads + t + 1) * 16;
        CHECK_OK(cudaMalloc(&ptr, size));
        if (write(log, &size, sizeof size) != sizeof size) std::abort();
        live.push_back(ptr);
        if (live.size() == 8) {  // keep a few live, free the rest: frees interleave with allocations
          for (size_t k = 0; k < 6; ++k) CHECK_OK(cudaFree(live[k]));
          live.erase(live.begin(), live.begin() + 6);
        }
      }
    });
  }
  for (auto& worker : workers) worker.join();
  return 0;
}
