// libsim_cublas.so: a stand-in for cuBLAS in the tests. Like cublasCreate, its handle comes with a workspace it
// allocates with cudaMalloc, so that the memory is made under a stack through this library: the OOM report must
// name it as cuBLAS's (analyzer/report/memory_owners.cpp matches "cublas" in the module's name).
#include <cuda_runtime_api.h>

#include <cstddef>

extern "C" __attribute__((visibility("default"), noinline)) int simcublasCreate(void** workspace, size_t bytes) {
  cudaError_t rc = cudaMalloc(workspace, bytes);
  __asm__ volatile("" ::: "memory");
  return rc == cudaSuccess ? 0 : 1;
}
