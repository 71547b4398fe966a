// A CUDA program that allocates through the runtime API: built twice, linked against NVIDIA's libcudart.so
// (sim_prog_runtime_shared) and against the simulated static runtime (sim_prog_runtime_static).
//
// usage: sim_prog_runtime_{shared,static} [MALLOC_BYTES [ASYNC_BYTES]]   (defaults 1000000 and 3000000)
//
// Every line is `<record> key=value ...`:
//   info runtime=<v> driver=<v> devices=<n> device=<d>
//   mem step=<name> free=<bytes> total=<bytes>           (cudaMemGetInfo after each step)
//   alloc api=<api> kind=<device|async> size=<bytes> result=<code>
//   free api=<api> kind=<device|async> size=<bytes> result=<code>
//   oversize api=cudaMalloc size=<bytes> result=<code> name=<error name> last_error=<code> cleared=<code>
//   summary allocations=<n> allocated_bytes=<n> frees=<n> freed_bytes=<n> failed_allocations=<n>
// It exits 0 when every call did what CUDA promises (the oversize request fails with cudaErrorMemoryAllocation and
// the last error reports it once), 1 otherwise, after printing `error call=<api> result=<code> name=<name>`.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "alloc_log.h"

namespace {

[[noreturn]] void die(const char* call, cudaError_t e) {
  std::printf("error call=%s result=%d name=%s\n", call, static_cast<int>(e), cudaGetErrorName(e));
  std::exit(1);
}

void ok(const char* call, cudaError_t e) {
  if (e != cudaSuccess) die(call, e);
}

size_t mem(const char* step) {
  size_t free_bytes = 0, total_bytes = 0;
  ok("cudaMemGetInfo", cudaMemGetInfo(&free_bytes, &total_bytes));
  std::printf("mem step=%s free=%zu total=%zu\n", step, free_bytes, total_bytes);
  return free_bytes;
}

void logged(const char* record, const char* api, const char* kind, size_t size, cudaError_t e) {
  if (!alloc_log::log(record, api, kind, size, e)) die(api, e);
}

size_t size_arg(int argc, char** argv, int i, size_t fallback) {
  return argc > i ? std::stoull(argv[i]) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t malloc_bytes = size_arg(argc, argv, 1, 1000000);
  const size_t async_bytes = size_arg(argc, argv, 2, 3000000);

  int runtime = 0, driver = 0, devices = 0, device = -1;
  ok("cudaRuntimeGetVersion", cudaRuntimeGetVersion(&runtime));
  ok("cudaDriverGetVersion", cudaDriverGetVersion(&driver));
  ok("cudaGetDeviceCount", cudaGetDeviceCount(&devices));
  ok("cudaGetDevice", cudaGetDevice(&device));
  std::printf("info runtime=%d driver=%d devices=%d device=%d\n", runtime, driver, devices, device);
  mem("start");

  void* p = nullptr;
  logged("alloc", "cudaMalloc", "device", malloc_bytes, cudaMalloc(&p, malloc_bytes));
  mem("after_cudaMalloc");

  cudaStream_t stream = nullptr;
  ok("cudaStreamCreate", cudaStreamCreate(&stream));
  void* q = nullptr;
  logged("alloc", "cudaMallocAsync", "async", async_bytes, cudaMallocAsync(&q, async_bytes, stream));
  ok("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  mem("after_cudaMallocAsync");
  logged("free", "cudaFreeAsync", "async", async_bytes, cudaFreeAsync(q, stream));
  ok("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  mem("after_cudaFreeAsync");
  ok("cudaStreamDestroy", cudaStreamDestroy(stream));

  logged("free", "cudaFree", "device", malloc_bytes, cudaFree(p));
  size_t free_bytes = mem("after_cudaFree");

  // One byte more than is free cannot fit.
  const size_t oversize = free_bytes + 1;
  void* r = nullptr;
  cudaError_t e = cudaMalloc(&r, oversize);
  cudaError_t last = cudaGetLastError();
  cudaError_t cleared = cudaGetLastError();
  std::printf("oversize api=cudaMalloc size=%zu result=%d name=%s last_error=%d cleared=%d\n", oversize,
              static_cast<int>(e), cudaGetErrorName(e), static_cast<int>(last), static_cast<int>(cleared));
  if (e != cudaErrorMemoryAllocation || last != cudaErrorMemoryAllocation || cleared != cudaSuccess) {
    std::printf("error call=oversize expected=%d\n", static_cast<int>(cudaErrorMemoryAllocation));
    return 1;
  }
  mem("after_oversize");
  alloc_log::summary(" failed_allocations=1");
  return 0;
}
