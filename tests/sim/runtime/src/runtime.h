// The simulated CUDA runtime's internals: the driver entry-point table, per-thread state, error handling.
// Public CUDA API only: cuda_runtime_api.h for what we export, cuda.h and the PFN_* typedefs for what we call.
#pragma once

#include <cuda.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <atomic>

// Exported API (the version script gives it the node libcudart.so.13 in the shared library).
#define SIM_CUDART_API extern "C" __attribute__((visibility("default")))

// The per-thread-default-stream entry points that the header only declares under CUDA_API_PER_THREAD_DEFAULT_STREAM.
extern "C" {
cudaError_t CUDARTAPI cudaMemcpy_ptds(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind);
cudaError_t CUDARTAPI cudaMemset_ptds(void* devPtr, int value, size_t count);
cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                           cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream);
cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream);
cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t stream);
cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
cudaError_t CUDARTAPI cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr, unsigned long long flags,
                                                   enum cudaDriverEntryPointQueryResult* driverStatus);
cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                                            unsigned long long flags,
                                                            enum cudaDriverEntryPointQueryResult* driverStatus);
}

namespace sim_cudart {

// One cuGetProcAddress request of NVIDIA's runtime (tests/data/cudart13-driver-lookups.tsv).
struct DriverLookup {
  const char* symbol;    // name asked for
  int cuda_version;      // ABI version asked for
  unsigned flags;        // 0, or 2 = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
  const char* resolved;  // the exported driver symbol this selects (used by the stub-library fallback)
};

#include "driver_lookups.inc"  // generated: enum Row, kLookups[], pfn::R_<row> types

// What every lookup returned, indexed by Row; NULL = the driver does not have it. Written once, under the
// load's once-guard, before any thread can see a ready context.
extern void* g_fn[kRowCount];

// The runtime's answer for CUresult r (one table, see errors.cpp).
cudaError_t to_runtime_error(CUresult r);

struct ThreadState {
  int device = 0;                 // cudaSetDevice's device (per thread, default 0)
  unsigned epoch = 0;             // == g_epoch when this thread's context for `device` is current
  cudaError_t last_error = cudaSuccess;
};
inline constinit thread_local ThreadState t_state{};

// Bumped by cudaDeviceReset so that every thread makes its device's primary context current again.
inline constinit std::atomic<unsigned> g_epoch{1};

// Records a failure as the thread's last error and returns it.
inline cudaError_t fail(cudaError_t e) {
  t_state.last_error = e;
  return e;
}
inline cudaError_t check(cudaError_t e) { return e == cudaSuccess ? e : fail(e); }

// Loads the driver once (thread-safe) and returns the sticky initialization result.
cudaError_t driver_init();
int device_count();        // after a successful driver_init()
CUdevice cu_device(int);   // ordinal -> CUdevice, after a successful driver_init()
inline bool valid_device(int device) { return device >= 0 && device < device_count(); }

// The device's primary context, retained once per process.
cudaError_t primary_context(int device, CUcontext* ctx);
// Makes the thread's device's primary context current (retaining it once per process).
cudaError_t activate_context(ThreadState& t);
// Forgets the device's primary context after cudaDeviceReset reset it.
void forget_context(int device);

// Entry of every call that needs a current context: free after the thread's first call.
inline cudaError_t enter() {
  ThreadState& t = t_state;
  if (t.epoch == g_epoch.load(std::memory_order_relaxed)) [[likely]] return cudaSuccess;
  return activate_context(t);
}
// Entry of calls that need only the driver (device queries, entry points).
inline cudaError_t enter_driver() { return check(driver_init()); }

// Calls a driver entry point from the table and maps its result. The row names are the resolved driver symbols.
template <class Fn, class... Args>
inline cudaError_t call_driver(Fn fn, Args... args) {
  if (fn == nullptr) [[unlikely]] return fail(cudaErrorNotSupported);
  CUresult r = fn(args...);
  if (r == CUDA_SUCCESS) [[likely]] return cudaSuccess;
  return fail(to_runtime_error(r));
}
#define SIM_DRV(row) reinterpret_cast<::sim_cudart::pfn::R_##row>(::sim_cudart::g_fn[::sim_cudart::R_##row])
#define SIM_CALL(row, ...) \
  ::sim_cudart::call_driver(reinterpret_cast<::sim_cudart::pfn::R_##row>(::sim_cudart::g_fn[::sim_cudart::R_##row]) \
                                __VA_OPT__(, ) __VA_ARGS__)

// Early return on a failed cudaError_t expression.
#define SIM_TRY(expr)                                        \
  do {                                                       \
    if (cudaError_t sim_e_ = (expr); sim_e_ != cudaSuccess)  \
      return sim_e_;                                         \
  } while (0)

// cudaStream_t and CUstream name the same driver object (cudaStreamLegacy/PerThread are CU_STREAM_LEGACY/PER_THREAD).
inline CUstream cu(cudaStream_t s) { return reinterpret_cast<CUstream>(s); }
inline CUevent cu(cudaEvent_t e) { return reinterpret_cast<CUevent>(e); }
inline CUarray cu(cudaArray_t a) { return reinterpret_cast<CUarray>(a); }
inline CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace sim_cudart
