// SIGALRM at 10 kHz (setitimer, 100 us) for the whole run, with a handler that allocates host memory and
// no SA_RESTART, so interrupted system calls fail with EINTR; meanwhile argv[1] threads make argv[2]
// cudaMalloc/cudaFree pairs each.
#include <cuda_runtime_api.h>
#include <signal.h>
#include <sys/time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/support/program_check.h"

namespace {
std::atomic<long> signals{0};

void on_alarm(int) {
  // Not async-signal-safe, as handlers in real programs often are not: the tracer must not care.
  void* p = std::malloc(64 + signals % 512);
  std::memset(p, 1, 64);
  std::free(p);
  signals.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  int pairs = argc > 2 ? std::atoi(argv[2]) : 100000;
  struct sigaction action {};
  action.sa_handler = on_alarm;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART
  CHECK_OK(sigaction(SIGALRM, &action, nullptr));
  itimerval every_100us{{0, 100}, {0, 100}};
  CHECK_OK(setitimer(ITIMER_REAL, &every_100us, nullptr));
  CHECK_OK(cudaFree(nullptr));
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
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  std::printf("done %d\nsignals %ld\n", threads * pairs, signals.load());
  return 0;
}
