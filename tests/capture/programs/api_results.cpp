// Prints the result code and out-parameters of every memory API it calls, so that runs with and without
// the tracer can be compared line by line (addresses only as "set"/"unset": ASLR moves them).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>

namespace {
const char* set(const void* p) { return p ? "set" : "unset"; }
}  // namespace

int main() {
  int count = -7;
  std::printf("cudaGetDeviceCount %d %d\n", cudaGetDeviceCount(&count), count);
  void* ptr = nullptr;
  std::printf("cudaMalloc %d %s\n", cudaMalloc(&ptr, 1 << 20), set(ptr));
  std::printf("cudaFree %d\n", cudaFree(ptr));
  void* bogus = reinterpret_cast<void*>(0x1234);
  std::printf("cudaFree(bogus) %d\n", cudaFree(bogus));
  void* managed = nullptr;
  std::printf("cudaMallocManaged %d %s\n", cudaMallocManaged(&managed, 4096, cudaMemAttachGlobal), set(managed));
  std::printf("cudaFree %d\n", cudaFree(managed));
  void* host = nullptr;
  std::printf("cudaMallocHost %d %s\n", cudaMallocHost(&host, 4096), set(host));
  std::printf("cudaFreeHost %d\n", cudaFreeHost(host));
  void* async = nullptr;
  std::printf("cudaMallocAsync %d %s\n", cudaMallocAsync(&async, 4096, nullptr), set(async));
  std::printf("cudaFreeAsync %d\n", cudaFreeAsync(async, nullptr));
  size_t free_bytes = 11, total_bytes = 13;
  std::printf("cudaMemGetInfo %d %zu %zu\n", cudaMemGetInfo(&free_bytes, &total_bytes), free_bytes, total_bytes);
  void* huge = nullptr;
  std::printf("cudaMalloc(huge) %d %s\n", cudaMalloc(&huge, size_t{1} << 50), set(huge));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  int rc = cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, &query);
  std::printf("cudaGetDriverEntryPointByVersion %d %s %d\n", rc, set(fn), static_cast<int>(query));
  std::printf("cudaGetLastError %d\n", cudaGetLastError());

  void* driver = dlopen("libcuda.so.1", RTLD_NOW);
  std::printf("dlopen libcuda.so.1 %s\n", set(driver));
  if (!driver) return 0;
  auto get = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(driver, "cuGetProcAddress_v2"));
  std::printf("dlsym cuGetProcAddress_v2 %s\n", set(reinterpret_cast<void*>(get)));
  if (!get) return 0;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  void* probe = nullptr;
  std::printf("probe %d %s\n", get("", &probe, 0, 0, &status), set(probe));
  void* alloc = nullptr;
  rc = get("cuMemAlloc", &alloc, 12000, 0, &status);
  std::printf("cuGetProcAddress cuMemAlloc %d %s %d\n", rc, set(alloc), static_cast<int>(status));
  if (alloc) {
    CUdeviceptr dptr = 0;
    std::printf("cuMemAlloc %d %s\n", reinterpret_cast<PFN_cuMemAlloc_v3020>(alloc)(&dptr, 4096),
                set(reinterpret_cast<void*>(dptr)));
  }
  void* plain = dlsym(driver, "cuMemFree_v2");
  std::printf("dlsym cuMemFree_v2 %s\n", set(plain));
  if (plain) std::printf("cuMemFree(0) %d\n", reinterpret_cast<PFN_cuMemFree_v3020>(plain)(0));
  return 0;
}
