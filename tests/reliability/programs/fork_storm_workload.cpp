// 8 threads allocate and free while the main thread forks 64 workers, 8 at a time. Each worker, like a
// data loader's, uses no CUDA (a forked child of a CUDA process may not): it records one phase through
// annotate.h, sized by its index so its trace can be told apart, and exits. Prints the workers' pids in
// order, and how many pairs each thread made.
#include <cuda_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "gpumemtrace/annotate.h"
#include "tests/support/program_check.h"

int main() {
  constexpr int kThreads = 8, kWorkers = 64, kAtOnce = 8;
  CHECK_OK(cudaFree(nullptr));
  std::atomic<bool> stop{false};
  std::vector<long> pairs(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &stop, &pairs] {
      // At least 1000 pairs each, and on until the last worker has exited.
      for (long i = 0; i < 1000 || !stop.load(); ++i) {
        void* ptr = nullptr;
        CHECK_OK(cudaMalloc(&ptr, static_cast<size_t>(512 * (t + 1))));
        CHECK_OK(cudaFree(ptr));
        pairs[t] = i + 1;
      }
    });
  }
  std::vector<pid_t> workers;
  for (int w = 0; w < kWorkers; w += kAtOnce) {
    std::vector<pid_t> batch;
    for (int k = 0; k < kAtOnce; ++k) {
      pid_t pid = fork();
      if (pid < 0) return 3;
      if (pid == 0) {
        std::string name = "worker " + std::to_string(w + k);
        gmt_phase_push(name.c_str());
        gmt_phase_pop();
        _exit(0);
      }
      batch.push_back(pid);
    }
    for (pid_t pid : batch) {
      int status = 0;
      if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 4;
      workers.push_back(pid);
    }
  }
  stop = true;
  for (auto& thread : threads) thread.join();
  for (pid_t pid : workers) std::printf("worker %d\n", pid);
  for (int t = 0; t < kThreads; ++t) std::printf("thread %d %ld\n", t, pairs[t]);
  return 0;
}
