// A program that interposes dlsym itself, as some profilers and plugin loaders do: its dlsym counts the
// lookups and forwards them to "the next" dlsym (argv[1] = "next": dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"),
// what a preloaded tracer is) or straight to glibc's ("libc": dlvsym on libc.so.6's handle). The CUDA
// runtime's own lookups bind to it too. Then argv[2] allocations of (i + 1) * 8192 + 300 bytes with cudaMalloc
// and as many of (i + 1) * 4096 + 77 bytes with cuMemAlloc_v2 looked up through it, all freed.
// Prints "done N" and "own dlsym found cuGetProcAddress_v2 K" (the runtime's lookups it served).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/support/program_check.h"

namespace {

using DlsymFn = void* (*)(void*, const char*);
bool g_to_libc = false;
int g_runtime_lookups = 0;

DlsymFn next_dlsym() {
  static const auto next = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
  return next;
}

DlsymFn libc_dlsym() {
  static const auto libc = reinterpret_cast<DlsymFn>(
      dlvsym(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), "dlsym", "GLIBC_2.34"));
  return libc;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
  if (std::strcmp(name, "cuGetProcAddress_v2") == 0) ++g_runtime_lookups;
  DlsymFn forward = g_to_libc ? libc_dlsym() : next_dlsym();
  return forward ? forward(handle, name) : nullptr;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  g_to_libc = std::strcmp(argv[1], "libc") == 0;
  int count = std::atoi(argv[2]);
  CHECK_OK(cudaFree(nullptr));  // loads the driver: the runtime's dlsym of cuGetProcAddress_v2 comes here
  std::vector<void*> runtime(count);
  for (int i = 0; i < count; ++i) CHECK_OK(cudaMalloc(&runtime[i], static_cast<size_t>(i + 1) * 8192 + 300));
  for (void* ptr : runtime) CHECK_OK(cudaFree(ptr));

  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!driver) return 3;
  auto alloc = reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t)>(dlsym(driver, "cuMemAlloc_v2"));
  auto free = reinterpret_cast<CUresult (*)(CUdeviceptr)>(dlsym(driver, "cuMemFree_v2"));
  if (!alloc || !free) return 4;
  std::vector<CUdeviceptr> direct(count);
  for (int i = 0; i < count; ++i) CHECK_OK(alloc(&direct[i], static_cast<size_t>(i + 1) * 4096 + 77));
  for (CUdeviceptr ptr : direct) CHECK_OK(free(ptr));
  std::printf("done %d\nown dlsym found cuGetProcAddress_v2 %d\n", count, g_runtime_lookups);
  return 0;
}
