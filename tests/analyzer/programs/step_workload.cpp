// A training loop in the shape the forecast reads (tests/analyzer/report/forecast_test.cpp): each step is
// an instance of phase "step".
//   step_workload STEPS KEEP_MIB WORK_MIB [SETTLE]
//   weights   64 MiB before the loop, held to the end
//   each step keep_for_logging(KEEP_MIB), kept: the leak (with SETTLE, only the last SETTLE steps' are kept,
//             a cache that stops growing), then run_layer(WORK_MIB), freed at the end of the step
// With STEP_WORKLOAD_PAUSE_AT=N and STEP_WORKLOAD_FIFO=PATH, step N stops after run_layer (its activations
// live, the step open): it prints "paused PID" and reads the fifo PATH until its writer closes it (`top` tests).
// An allocation that fails prints "out of memory in step N" and exits 3. On a device of M MiB (nothing else
// on it) step N holds 64 + N·KEEP + WORK MiB at its peak, so the first step that fails is the first N with
// 64 + N·KEEP + WORK > M.
#include <cuda_runtime_api.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>

#include "gpumemtrace/annotate.h"

namespace {
constexpr size_t kMiB = size_t{1} << 20;
int g_step = 0;

void* allocate(size_t bytes) {
  void* ptr = nullptr;
  if (cudaMalloc(&ptr, bytes) != cudaSuccess) {  // every allocation of the program
    std::printf("out of memory in step %d\n", g_step);
    std::exit(3);
  }
  return ptr;
}
}  // namespace

extern "C" __attribute__((noinline)) void* alloc_weights(size_t bytes) {
  void* ptr = allocate(bytes);
  __asm__ volatile("" ::: "memory");  // keep the call from becoming a tail call
  return ptr;
}

extern "C" __attribute__((noinline)) void* keep_for_logging(size_t bytes) {
  void* ptr = allocate(bytes);  // the line that keeps memory step after step
  __asm__ volatile("" ::: "memory");
  return ptr;
}

extern "C" __attribute__((noinline)) void* run_layer(size_t bytes) {
  void* ptr = allocate(bytes);
  __asm__ volatile("" ::: "memory");
  return ptr;
}

// Waits until the writer of the fifo closes it.
void pause_on(const char* fifo) {
  std::printf("paused %d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
  int fd = open(fifo, O_RDONLY);
  char byte;
  while (fd >= 0 && read(fd, &byte, 1) > 0) {
  }
  if (fd >= 0) close(fd);
}

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  int steps = std::atoi(argv[1]);
  size_t keep = std::strtoull(argv[2], nullptr, 10) * kMiB;
  size_t work = std::strtoull(argv[3], nullptr, 10) * kMiB;
  size_t settle = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 0;
  const char* pause_at = std::getenv("STEP_WORKLOAD_PAUSE_AT");
  const char* fifo = std::getenv("STEP_WORKLOAD_FIFO");
  void* weights = alloc_weights(64 * kMiB);
  std::deque<void*> kept;
  for (g_step = 1; g_step <= steps; ++g_step) {
    gmt_phase_push("step");
    kept.push_back(keep_for_logging(keep));
    if (settle > 0 && kept.size() > settle) {
      cudaFree(kept.front());
      kept.pop_front();
    }
    void* activations = run_layer(work);
    if (pause_at && fifo && std::atoi(pause_at) == g_step) pause_on(fifo);
    cudaFree(activations);
    gmt_phase_pop();
  }
  for (void* ptr : kept) cudaFree(ptr);
  cudaFree(weights);
  return 0;
}
