// A stand-in for a tracer preloaded in front of the simulated driver: it exports cuMemAlloc_v2 and fails it.
#include <cuda.h>

extern "C" __attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr*, size_t) {
  return CUDA_ERROR_UNKNOWN;
}
