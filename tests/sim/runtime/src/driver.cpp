// Loading the driver the way NVIDIA's runtime does, primary contexts, and the driver entry-point API.
#include <dlfcn.h>

#include <memory>
#include <mutex>

#include "runtime.h"

namespace sim_cudart {

void* g_fn[kRowCount];

namespace {

int g_device_count = 0;
std::unique_ptr<CUdevice[]> g_devices;
std::mutex g_context_mutex;
std::unique_ptr<CUcontext[]> g_primary;  // per ordinal, retained on first use, guarded by g_context_mutex

using GetProcAddress = PFN_cuGetProcAddress_v12000;

// dlopen, one dlsym of cuGetProcAddress_v2, the empty-name probe, then every lookup of NVIDIA's list in order.
// The first lookups go through the dlsym'd pointer, every one after cuGetProcAddress@12000 through what that
// returned. A stub driver (probe says CUDA_ERROR_STUB_LIBRARY) gets plain dlsym of each resolved name instead.
bool look_up_driver(void* handle) {
  auto get = reinterpret_cast<GetProcAddress>(dlsym(handle, "cuGetProcAddress_v2"));
  if (get == nullptr) return false;
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (get("", &fn, 0, 0, &status) == CUDA_ERROR_STUB_LIBRARY) {
    for (unsigned row = 0; row < kRowCount; ++row) g_fn[row] = dlsym(handle, kLookups[row].resolved);
    return true;
  }
  for (unsigned row = 0; row < kRowCount; ++row) {
    const DriverLookup& l = kLookups[row];
    fn = nullptr;
    if (get(l.symbol, &fn, l.cuda_version, l.flags, &status) != CUDA_SUCCESS) fn = nullptr;
    g_fn[row] = fn;
    if (row == R_cuGetProcAddress_v2 && fn != nullptr) get = reinterpret_cast<GetProcAddress>(fn);
  }
  return true;
}

cudaError_t load_driver() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW);
  if (handle == nullptr || !look_up_driver(handle) || g_fn[R_cuInit] == nullptr)
    return cudaErrorInsufficientDriver;
  if (CUresult r = SIM_DRV(cuInit)(0); r != CUDA_SUCCESS) return to_runtime_error(r);
  int version = 0;
  if (g_fn[R_cuDriverGetVersion] == nullptr || SIM_DRV(cuDriverGetVersion)(&version) != CUDA_SUCCESS ||
      version < CUDART_VERSION)
    return cudaErrorInsufficientDriver;
  int count = 0;
  if (g_fn[R_cuDeviceGetCount] == nullptr || g_fn[R_cuDeviceGet] == nullptr) return cudaErrorInsufficientDriver;
  if (CUresult r = SIM_DRV(cuDeviceGetCount)(&count); r != CUDA_SUCCESS) return to_runtime_error(r);
  if (count <= 0) return cudaErrorNoDevice;
  g_devices = std::make_unique<CUdevice[]>(count);
  g_primary = std::make_unique<CUcontext[]>(count);
  for (int i = 0; i < count; ++i)
    if (CUresult r = SIM_DRV(cuDeviceGet)(&g_devices[i], i); r != CUDA_SUCCESS) return to_runtime_error(r);
  g_device_count = count;
  return cudaSuccess;
}

}  // namespace

cudaError_t driver_init() {
  static const cudaError_t result = load_driver();  // once, thread-safe, on the first call that needs the driver
  return result;
}

int device_count() { return g_device_count; }
CUdevice cu_device(int device) { return g_devices[device]; }

cudaError_t primary_context(int device, CUcontext* ctx) {
  SIM_TRY(enter_driver());
  std::lock_guard<std::mutex> lock(g_context_mutex);
  CUcontext& primary = g_primary[device];
  if (primary == nullptr) SIM_TRY(SIM_CALL(cuDevicePrimaryCtxRetain, &primary, cu_device(device)));
  *ctx = primary;
  return cudaSuccess;
}

cudaError_t activate_context(ThreadState& t) {
  SIM_TRY(enter_driver());
  unsigned epoch = g_epoch.load(std::memory_order_acquire);
  CUcontext ctx = nullptr;
  SIM_TRY(primary_context(t.device, &ctx));
  SIM_TRY(SIM_CALL(cuCtxSetCurrent, ctx));
  t.epoch = epoch;
  return cudaSuccess;
}

void forget_context(int device) {
  {
    std::lock_guard<std::mutex> lock(g_context_mutex);
    g_primary[device] = nullptr;
  }
  g_epoch.fetch_add(1, std::memory_order_acq_rel);
}

namespace {

cudaError_t entry_point(const char* symbol, void** funcPtr, unsigned cudaVersion, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* driverStatus) {
  SIM_TRY(enter_driver());
  if (symbol == nullptr || funcPtr == nullptr) return fail(cudaErrorInvalidValue);
  auto get = SIM_DRV(cuGetProcAddress_v2);
  if (get == nullptr) return fail(cudaErrorNotSupported);
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult r = get(symbol, funcPtr, static_cast<int>(cudaVersion), flags, &status);
  if (driverStatus != nullptr) *driverStatus = static_cast<cudaDriverEntryPointQueryResult>(status);
  // A symbol that is missing or too new is a successful query with a NULL pointer.
  if (r == CUDA_ERROR_NOT_FOUND) {
    *funcPtr = nullptr;
    return cudaSuccess;
  }
  return check(to_runtime_error(r));
}

// cudaEnableDefault means legacy-stream semantics, or per-thread ones for a caller built for the per-thread default
// stream (the _ptsz exports).
constexpr unsigned long long per_thread(unsigned long long flags) {
  return flags == cudaEnableDefault ? static_cast<unsigned long long>(cudaEnablePerThreadDefaultStream) : flags;
}

}  // namespace
}  // namespace sim_cudart

using namespace sim_cudart;

SIM_CUDART_API cudaError_t CUDARTAPI cudaGetDriverEntryPoint(const char* symbol, void** funcPtr,
                                                              unsigned long long flags,
                                                              cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                                                   unsigned long long flags,
                                                                   cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, CUDART_VERSION, per_thread(flags), driverStatus);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                                                       unsigned int cudaVersion,
                                                                       unsigned long long flags,
                                                                       cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion_ptsz(
    const char* symbol, void** funcPtr, unsigned int cudaVersion, unsigned long long flags,
    cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, cudaVersion, per_thread(flags), driverStatus);
}
