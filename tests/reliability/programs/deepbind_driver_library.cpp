// A plugin that allocates through the CUDA driver it is linked with (-lcuda). Loaded with RTLD_DEEPBIND
// (deepbind_workload.cpp), its cuMemAlloc binds to the driver, never to a preloaded library's.
#include <cuda.h>

#include <vector>

// count allocations of (i + 1) * 4096 + 100 bytes, all live at once, then freed; the count made, or -1.
extern "C" __attribute__((visibility("default"))) int plugin_allocate(int count) {
  CUdevice device;
  CUcontext context;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS || cuCtxSetCurrent(context) != CUDA_SUCCESS) {
    return -1;
  }
  std::vector<CUdeviceptr> live(count);
  for (int i = 0; i < count; ++i) {
    if (cuMemAlloc(&live[i], static_cast<size_t>(i + 1) * 4096 + 100) != CUDA_SUCCESS) return -1;
  }
  for (CUdeviceptr ptr : live) {
    if (cuMemFree(ptr) != CUDA_SUCCESS) return -1;
  }
  return count;
}
