// Runs out of memory in one of five ways, on a 1 GiB simulated device (GPUMEMTRACE_SIM_MEMORY=1GiB):
//   too-large   holds 100 MiB, then asks for 2 GiB
//   others      holds 64 MiB, then asks for 256 MiB while other processes hold 768 MiB
//               (run with GPUMEMTRACE_SIM_OTHERS_MEMORY=768MiB): 192 MiB free
//   pool        frees 512 MiB into the default async pool (kept reserved: the release threshold is
//               raised and nothing synchronizes), then asks cudaMalloc for 768 MiB: 512 MiB free
//   growth      each step keeps 32 MiB (keep_step) and uses 16 MiB of scratch; in step 31 the kept
//               allocation fails: 1008 MiB live, 16 MiB free, 32 MiB asked
//   live-set    holds 900 MiB at once, then asks for 200 MiB: 124 MiB free
//   hold        holds 64 MiB and waits, idle, until it is killed (a stale process for `gpumemtrace info`)
// Exits 0 once the expected allocation has failed.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tests/support/program_check.h"

// What each step keeps: the stack the growth verdict must name.
extern "C" __attribute__((noinline)) void* keep_step(size_t bytes) {
  void* ptr = nullptr;
  cudaError_t rc = cudaMalloc(&ptr, bytes);
  __asm__ volatile("" ::: "memory");
  return rc == cudaSuccess ? ptr : nullptr;
}

namespace {

constexpr size_t kMiB = size_t{1} << 20;

void* device_alloc(size_t bytes) {
  void* ptr = nullptr;
  CHECK_OK(cudaMalloc(&ptr, bytes));
  return ptr;
}

void expect_oom(size_t bytes) {
  void* ptr = nullptr;
  CHECK_EQ(cudaMalloc(&ptr, bytes), cudaErrorMemoryAllocation);
}

void grow_until_oom() {
  for (int step = 0;; ++step) {
    void* scratch = device_alloc(16 * kMiB);
    void* kept = keep_step(32 * kMiB);
    CHECK_OK(cudaFree(scratch));
    if (!kept) {
      std::printf("out of memory in step %d\n", step);
      return;
    }
    usleep(1000);
  }
}

void pool_holds_memory() {
  cudaMemPool_t pool = nullptr;
  CHECK_OK(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t keep_everything = UINT64_MAX;
  CHECK_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything));
  cudaStream_t stream = nullptr;
  CHECK_OK(cudaStreamCreate(&stream));
  void* cached = nullptr;
  CHECK_OK(cudaMallocAsync(&cached, 512 * kMiB, stream));
  CHECK_OK(cudaFreeAsync(cached, stream));
  expect_oom(768 * kMiB);
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "too-large") == 0) {
    device_alloc(100 * kMiB);
    expect_oom(2048 * kMiB);
  } else if (std::strcmp(mode, "others") == 0) {
    device_alloc(64 * kMiB);
    expect_oom(256 * kMiB);
  } else if (std::strcmp(mode, "pool") == 0) {
    pool_holds_memory();
  } else if (std::strcmp(mode, "growth") == 0) {
    grow_until_oom();
  } else if (std::strcmp(mode, "live-set") == 0) {
    device_alloc(900 * kMiB);
    expect_oom(200 * kMiB);
  } else if (std::strcmp(mode, "hold") == 0) {
    device_alloc(64 * kMiB);
    for (;;) pause();
  } else {
    std::fprintf(stderr, "usage: oom_workload too-large|others|pool|growth|live-set|hold\n");
    return 2;
  }
  return 0;
}
