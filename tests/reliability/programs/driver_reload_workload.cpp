// Loads the driver with dlopen, allocates and frees through functions looked up with dlsym, and unloads
// it with dlclose, argv[1] times over (iteration i allocates 4096 + i bytes).
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "tests/support/program_check.h"

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 100;
  for (int i = 0; i < rounds; ++i) {
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver) {
      std::fprintf(stderr, "dlopen: %s\n", dlerror());
      return 3;
    }
    auto init = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(driver, "cuInit"));
    auto device_get = reinterpret_cast<CUresult (*)(CUdevice*, int)>(dlsym(driver, "cuDeviceGet"));
    auto retain = reinterpret_cast<CUresult (*)(CUcontext*, CUdevice)>(dlsym(driver, "cuDevicePrimaryCtxRetain"));
    auto set_current = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(driver, "cuCtxSetCurrent"));
    auto alloc = reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t)>(dlsym(driver, "cuMemAlloc_v2"));
    auto free = reinterpret_cast<CUresult (*)(CUdeviceptr)>(dlsym(driver, "cuMemFree_v2"));
    if (!init || !device_get || !retain || !set_current || !alloc || !free) return 4;
    CHECK_OK(init(0));
    CUdevice device;
    CHECK_OK(device_get(&device, 0));
    CUcontext context;
    CHECK_OK(retain(&context, device));
    CHECK_OK(set_current(context));
    CUdeviceptr ptr = 0;
    CHECK_OK(alloc(&ptr, static_cast<size_t>(4096 + i)));
    CHECK_OK(free(ptr));
    CHECK_OK(dlclose(driver));
  }
  std::printf("done %d\n", rounds);
  return 0;
}
