// SIGALRM at 10 kHz (setitimer, 100 us) for the whole run, with a handler that uses the stack and fails a
// system call, and no SA_RESTART, so interrupted system calls fail with EINTR; meanwhile argv[1] threads make argv[2]
// cudaMalloc/cudaFree pairs each.
//
// The handler does only what a handler may (async-signal-safe calls). It used to call malloc, and under
// AddressSanitizer the program hung by itself, without a frame of the tracer: the signal came while the
// thread held ASan's allocator lock (starting a thread frees memory) and the handler's free waited for it.
#include <cuda_runtime_api.h>
#include <errno.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

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
  // Uses the stack and fails a system call, restoring errno as a handler must (TSan checks that it does).
  int saved_errno = errno;
  volatile char scratch[512];
  std::memset(const_cast<char*>(scratch), 1, 64 + static_cast<size_t>(signals % 448));
  [[maybe_unused]] ssize_t failed = write(-1, "", 0);
  errno = saved_errno;
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
