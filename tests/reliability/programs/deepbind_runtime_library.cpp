// A plugin that allocates through the CUDA runtime it is linked with. Loaded with RTLD_DEEPBIND
// (deepbind_workload.cpp), its cudaMalloc binds to that runtime, never to a preloaded library's.
#include <cuda_runtime_api.h>

#include <vector>

// count allocations of (i + 1) * 4096 + 100 bytes, all live at once, then freed; the count made, or -1.
extern "C" __attribute__((visibility("default"))) int plugin_allocate(int count) {
  std::vector<void*> live(count);
  for (int i = 0; i < count; ++i) {
    if (cudaMalloc(&live[i], static_cast<size_t>(i + 1) * 4096 + 100) != cudaSuccess) return -1;
  }
  for (void* ptr : live) {
    if (cudaFree(ptr) != cudaSuccess) return -1;
  }
  return count;
}
