// Prints the result code and out-parameters of every memory API it calls, so that runs with and without
// the tracer can be compared line by line (addresses only as "set"/"unset": ASLR moves them).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cerrno>
#include <cstdio>

namespace {
const char* set(const void* p) { return p ? "set" : "unset"; }
}  // namespace

int main() {
  // Every call is made before its line is printed: printf's arguments are evaluated in no fixed order, so
  // an out-parameter passed beside the call could be read before the call fills it in.
  int count = -7;
  int rc = cudaGetDeviceCount(&count);
  std::printf("cudaGetDeviceCount %d %d\n", rc, count);
  void* ptr = nullptr;
  // errno too: the first traced call is where the tracer creates its trace file.
  errno = 4321;
  rc = cudaMalloc(&ptr, 1 << 20);
  int saved_errno = errno;
  std::printf("cudaMalloc %d %s errno %d\n", rc, set(ptr), saved_errno);
  errno = 4322;
  rc = cudaFree(ptr);
  saved_errno = errno;
  std::printf("cudaFree %d errno %d\n", rc, saved_errno);
  rc = cudaFree(reinterpret_cast<void*>(0x1234));
  std::printf("cudaFree(bogus) %d\n", rc);
  void* managed = nullptr;
  rc = cudaMallocManaged(&managed, 4096, cudaMemAttachGlobal);
  std::printf("cudaMallocManaged %d %s\n", rc, set(managed));
  std::printf("cudaFree %d\n", cudaFree(managed));
  void* host = nullptr;
  rc = cudaMallocHost(&host, 4096);
  std::printf("cudaMallocHost %d %s\n", rc, set(host));
  std::printf("cudaFreeHost %d\n", cudaFreeHost(host));
  void* async = nullptr;
  rc = cudaMallocAsync(&async, 4096, nullptr);
  std::printf("cudaMallocAsync %d %s\n", rc, set(async));
  std::printf("cudaFreeAsync %d\n", cudaFreeAsync(async, nullptr));
  size_t free_bytes = 11, total_bytes = 13;
  rc = cudaMemGetInfo(&free_bytes, &total_bytes);
  std::printf("cudaMemGetInfo %d %zu %zu\n", rc, free_bytes, total_bytes);
  void* huge = nullptr;
  rc = cudaMalloc(&huge, size_t{1} << 50);
  std::printf("cudaMalloc(huge) %d %s\n", rc, set(huge));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  rc = cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, &query);
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
  rc = get("", &probe, 0, 0, &status);
  std::printf("probe %d %s\n", rc, set(probe));
  void* alloc = nullptr;
  rc = get("cuMemAlloc", &alloc, 12000, 0, &status);
  std::printf("cuGetProcAddress cuMemAlloc %d %s %d\n", rc, set(alloc), static_cast<int>(status));
  if (alloc) {
    CUdeviceptr dptr = 0;
    rc = reinterpret_cast<PFN_cuMemAlloc_v3020>(alloc)(&dptr, 4096);
    std::printf("cuMemAlloc %d %s\n", rc, set(reinterpret_cast<void*>(dptr)));
  }
  void* plain = dlsym(driver, "cuMemFree_v2");
  std::printf("dlsym cuMemFree_v2 %s\n", set(plain));
  if (plain) std::printf("cuMemFree(0) %d\n", reinterpret_cast<PFN_cuMemFree_v3020>(plain)(0));
  return 0;
}
