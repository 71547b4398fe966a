// Linked with -lcuda: 16 threads call cuInit at the same moment, so the tracer's exported driver
// functions resolve the real driver from 16 threads at once; then each allocates (thread t: 1000 + t
// bytes) and frees through the driver API.
#include <cuda.h>
#include <pthread.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "tests/support/program_check.h"

int main() {
  constexpr int kThreads = 16;
  pthread_barrier_t start;
  pthread_barrier_init(&start, nullptr, kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &start] {
      pthread_barrier_wait(&start);
      CHECK_OK(cuInit(0));
      CUdevice device;
      CHECK_OK(cuDeviceGet(&device, 0));
      CUcontext context;
      CHECK_OK(cuDevicePrimaryCtxRetain(&context, device));
      CHECK_OK(cuCtxSetCurrent(context));
      CUdeviceptr ptr = 0;
      CHECK_OK(cuMemAlloc(&ptr, 1000 + t));
      CHECK_OK(cuMemFree(ptr));
    });
  }
  for (auto& thread : threads) thread.join();
  std::printf("done %d\n", kThreads);
  return 0;
}
