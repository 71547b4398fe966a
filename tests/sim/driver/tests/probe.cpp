// Reports what the simulated driver says under the environment it was started with, for tests that need another
// configuration than the in-process one: "init=<CUresult> devices=<n>", then "device <i> free=<bytes>
// total=<bytes>" per device. With --lookups it makes a few cuGetProcAddress_v2 requests first (the runtime's
// empty-name probe, cuInit, cuMemAllocAsync per-thread). With --interposed (run with a library that exports
// cuMemAlloc_v2 preloaded) it prints what the direct call and the cuGetProcAddress pointer return.
#include <cuda.h>

#include <cstdio>
#include <cstring>

namespace {

void interposed() {
  CUcontext ctx;
  cuDevicePrimaryCtxRetain(&ctx, 0);
  cuCtxSetCurrent(ctx);
  CUdeviceptr p = 0;
  std::printf("direct=%d\n", static_cast<int>(cuMemAlloc(&p, 512)));
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status;
  cuGetProcAddress("cuMemAlloc", &fn, 3020, 0, &status);
  auto looked_up = reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t)>(fn);
  std::printf("looked_up=%d\n", static_cast<int>(looked_up(&p, 512)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--lookups") == 0) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status;
    cuGetProcAddress("", &fn, 0, 0, &status);
    cuGetProcAddress("cuInit", &fn, 2000, 0, &status);
    cuGetProcAddress("cuMemAllocAsync", &fn, 11020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status);
  }
  CUresult r = cuInit(0);
  int count = 0;
  if (r == CUDA_SUCCESS) cuDeviceGetCount(&count);
  std::printf("init=%d devices=%d\n", static_cast<int>(r), count);
  if (argc > 1 && std::strcmp(argv[1], "--interposed") == 0) {
    interposed();
    return 0;
  }
  for (int i = 0; i < count; i++) {
    CUcontext ctx;
    size_t free = 0, total = 0;
    cuDevicePrimaryCtxRetain(&ctx, i);
    cuCtxSetCurrent(ctx);
    cuMemGetInfo(&free, &total);
    std::printf("device %d free=%zu total=%zu\n", i, free, total);
  }
  return 0;
}
