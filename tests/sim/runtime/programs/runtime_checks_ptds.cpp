// Built with CUDA_API_PER_THREAD_DEFAULT_STREAM, like `nvcc --default-stream per-thread`: the header turns these
// calls into the _ptsz/_ptds exports, where stream 0 means the calling thread's default stream.
#include <cuda_runtime_api.h>

#include <vector>

#include "checks.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace checks {

int ptds_checks() {
  size_t free_start = 0, total = 0, free_end = 0;
  expect("cudaMemGetInfo", cudaMemGetInfo(&free_start, &total));
  void* p = nullptr;
  expect("cudaMallocAsync_ptsz", cudaMallocAsync(&p, 1 << 20, nullptr));
  expect("cudaMemsetAsync_ptsz", cudaMemsetAsync(p, 0x5a, 1 << 20, nullptr));
  std::vector<unsigned char> host(256, 0);
  expect("cudaMemcpyAsync_ptsz", cudaMemcpyAsync(host.data(), p, host.size(), cudaMemcpyDeviceToHost, nullptr));
  expect("cudaStreamSynchronize_ptsz", cudaStreamSynchronize(nullptr));
  require("async_data", host[0] == 0x5a && host[255] == 0x5a);
  expect("cudaMemset_ptds", cudaMemset(p, 0x21, 16));
  expect("cudaMemcpy_ptds", cudaMemcpy(host.data(), p, 16, cudaMemcpyDefault));
  require("sync_data", host[15] == 0x21 && host[16] == 0x5a);
  cudaEvent_t event = nullptr;
  expect("cudaEventCreate", cudaEventCreate(&event));
  expect("cudaEventRecord_ptsz", cudaEventRecord(event, nullptr));
  expect("cudaStreamQuery_ptsz", cudaStreamQuery(nullptr));
  expect("cudaEventSynchronize", cudaEventSynchronize(event));
  expect("cudaEventDestroy", cudaEventDestroy(event));
  expect("cudaFreeAsync_ptsz", cudaFreeAsync(p, nullptr));

  cudaMemPool_t pool = nullptr;
  expect("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, 0));
  expect("cudaMallocFromPoolAsync_ptsz", cudaMallocFromPoolAsync(&p, 4096, pool, nullptr));
  expect("cudaFreeAsync_ptsz", cudaFreeAsync(p, nullptr));
  expect("cudaStreamSynchronize_ptsz", cudaStreamSynchronize(nullptr));
  expect("cudaMemGetInfo", cudaMemGetInfo(&free_end, &total));
  require("all_memory_back", free_end == free_start);

  // cudaEnableDefault in a per-thread build selects the per-thread driver entry points.
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  expect("cudaGetDriverEntryPoint_ptsz", cudaGetDriverEntryPoint("cuMemAllocAsync", &fn, cudaEnableDefault, &status));
  value("EntryPoint_ptsz.cuMemAllocAsync", driver_symbol(fn, {"cuMemAllocAsync", "cuMemAllocAsync_ptsz"}));
  expect("cudaGetDriverEntryPointByVersion_ptsz",
         cudaGetDriverEntryPointByVersion("cuMemFreeAsync", &fn, 12000, cudaEnableDefault, &status));
  value("ByVersion_ptsz.cuMemFreeAsync", driver_symbol(fn, {"cuMemFreeAsync", "cuMemFreeAsync_ptsz"}));
  expect("cudaGetDriverEntryPointByVersion_ptsz(legacy)",
         cudaGetDriverEntryPointByVersion("cuMemFreeAsync", &fn, 12000, cudaEnableLegacyStream, &status));
  value("ByVersion_ptsz.legacy.cuMemFreeAsync", driver_symbol(fn, {"cuMemFreeAsync", "cuMemFreeAsync_ptsz"}));
  return g_failures;
}

}  // namespace checks
