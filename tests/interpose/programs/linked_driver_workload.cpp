// Linked with -lcuda and calling the driver API directly, without any runtime.
#include <cuda.h>

#include <cstdio>

#include "tests/support/program_check.h"

int main() {
  CHECK_OK(cuInit(0));
  CUdevice device;
  CHECK_OK(cuDeviceGet(&device, 0));
  CUcontext context;
  CHECK_OK(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_OK(cuCtxSetCurrent(context));
  CUdeviceptr a = 0, b = 0;
  CHECK_OK(cuMemAlloc(&a, 12345));
  CHECK_OK(cuMemAlloc(&b, 678));
  CHECK_OK(cuMemFree(a));
  void* host = nullptr;
  CHECK_OK(cuMemHostAlloc(&host, 4096, 0));
  CHECK_OK(cuMemFreeHost(host));
  size_t free_bytes = 0, total_bytes = 0;
  CHECK_OK(cuMemGetInfo(&free_bytes, &total_bytes));
  std::printf("meminfo %zu\n", free_bytes);
  return 0;
}
