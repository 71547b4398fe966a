// Helpers of sim_prog_runtime_checks. Output lines:
//   call=<what> result=<code>                a runtime call and what it returned
//   value <key>=<number or word>             something it observed
//   unexpected call=<what> result=<code> expected=<code>
// The program exits 1 when anything was unexpected.
#pragma once

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <initializer_list>

namespace checks {

inline int g_failures = 0;

inline cudaError_t expect(const char* what, cudaError_t got, cudaError_t want = cudaSuccess) {
  std::printf("call=%s result=%d\n", what, static_cast<int>(got));
  if (got != want) {
    std::printf("unexpected call=%s result=%d expected=%d\n", what, static_cast<int>(got), static_cast<int>(want));
    ++g_failures;
  }
  return got;
}

inline void value(const char* key, long long v) { std::printf("value %s=%lld\n", key, v); }
inline void value(const char* key, const char* v) { std::printf("value %s=%s\n", key, v); }

inline void require(const char* what, bool holds) {
  std::printf("check %s=%s\n", what, holds ? "yes" : "no");
  if (!holds) ++g_failures;
}

// Which exported driver symbol `fn` is (the driver the runtime loaded), or "null"/"other".
inline const char* driver_symbol(void* fn, std::initializer_list<const char*> candidates) {
  if (fn == nullptr) return "null";
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  for (const char* c : candidates)
    if (driver != nullptr && dlsym(driver, c) == fn) return c;
  return "other";
}

// Checks through the per-thread-default-stream entry points (runtime_checks_ptds.cpp).
int ptds_checks();
// Kernels and the other calls PyTorch makes beyond allocation (runtime_checks_kernels.cpp).
int kernel_checks();

}  // namespace checks
