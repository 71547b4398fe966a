// A workload whose figures the budget tests know exactly (tests/analyzer/budget_test.cpp):
//   budget_workload WEIGHTS_MIB CACHE_MIB ACTIVATIONS_MIB [OOM_MIB]
//   weights      WEIGHTS_MIB, freed at the end
//   cache        CACHE_MIB, leaked
//   activations  ACTIVATIONS_MIB, allocated after the others and freed: the peak is their sum
//   OOM_MIB      when given, one allocation of that size that must fail (out of memory), after the peak
// Each size comes from its own function, so each is one stack the baseline and diff name.
#include <cuda_runtime_api.h>

#include <cstdlib>

#include "tests/support/program_check.h"

namespace {
constexpr size_t kMiB = size_t{1} << 20;
}  // namespace

extern "C" __attribute__((noinline)) void* alloc_weights(size_t bytes) {
  void* ptr = nullptr;
  if (bytes) CHECK_OK(cudaMalloc(&ptr, bytes));
  __asm__ volatile("" ::: "memory");  // keep the call from becoming a tail call
  return ptr;
}

extern "C" __attribute__((noinline)) void* alloc_cache(size_t bytes) {
  void* ptr = nullptr;
  if (bytes) CHECK_OK(cudaMalloc(&ptr, bytes));
  __asm__ volatile("" ::: "memory");
  return ptr;
}

extern "C" __attribute__((noinline)) void* alloc_activations(size_t bytes) {
  void* ptr = nullptr;
  if (bytes) CHECK_OK(cudaMalloc(&ptr, bytes));
  __asm__ volatile("" ::: "memory");
  return ptr;
}

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  void* weights = alloc_weights(std::strtoull(argv[1], nullptr, 10) * kMiB);
  alloc_cache(std::strtoull(argv[2], nullptr, 10) * kMiB);
  void* activations = alloc_activations(std::strtoull(argv[3], nullptr, 10) * kMiB);
  if (activations) CHECK_OK(cudaFree(activations));
  if (argc > 4) {
    void* ptr = nullptr;
    CHECK_EQ(cudaMalloc(&ptr, std::strtoull(argv[4], nullptr, 10) * kMiB), cudaErrorMemoryAllocation);
  }
  if (weights) CHECK_OK(cudaFree(weights));
  return 0;
}
