// Device code: the registration calls of nvcc-generated host code, kernel attributes and occupancy, and launches.
// The simulated device runs no device code: a launch checks its configuration and stream and completes at once, so
// a kernel's output is whatever the memory held before (memory, not arithmetic, is what the device simulates).
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime.h"

extern "C" {
// Declared by crt/host_runtime.h and crt/device_functions.h only for code that nvcc compiles.
void** CUDARTAPI __cudaRegisterFatBinary(void* fatCubin);
unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st* stream);
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t* kernel, const void* func);
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                         size_t sharedMem, cudaStream_t stream);
}

using namespace sim_cudart;

namespace {

// Host stub address -> device function name, for every __cudaRegisterFunction of a registered fat binary.
std::mutex g_functions_mutex;
std::unordered_map<const void*, const char*>& functions() {
  static auto* map = new std::unordered_map<const void*, const char*>;  // never destroyed: used at exit
  return *map;
}

bool registered(const void* func) {
  std::lock_guard<std::mutex> lock(g_functions_mutex);
  return func != nullptr && functions().contains(func);
}

// One <<<...>>> configuration between __cudaPushCallConfiguration and the stub's __cudaPopCallConfiguration.
struct CallConfiguration {
  dim3 grid;
  dim3 block;
  size_t shared_mem;
  cudaStream_t stream;
};
thread_local std::vector<CallConfiguration> t_configurations;

constexpr unsigned kMaxThreadsPerBlock = 1024;

bool valid_configuration(dim3 grid, dim3 block) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0) return false;
  return static_cast<unsigned long long>(block.x) * block.y * block.z <= kMaxThreadsPerBlock;
}

// A launch: the function must be registered, the configuration valid and the stream usable; then it is done.
cudaError_t launch(const void* func, dim3 grid, dim3 block, cudaStream_t stream) {
  SIM_TRY(enter());
  if (!registered(func)) return fail(cudaErrorInvalidDeviceFunction);
  if (!valid_configuration(grid, block)) return fail(cudaErrorInvalidConfiguration);
  unsigned flags = 0;
  return SIM_CALL(cuStreamGetFlags, cu(stream), &flags);
}

int device_attribute(cudaDeviceAttr attr) {
  int value = 0;
  return cudaDeviceGetAttribute(&value, attr, t_state.device) == cudaSuccess ? value : 0;
}

}  // namespace

SIM_CUDART_API void** CUDARTAPI __cudaRegisterFatBinary(void* fatCubin) { return new void*(fatCubin); }

SIM_CUDART_API void CUDARTAPI __cudaRegisterFatBinaryEnd(void**) {}

SIM_CUDART_API void CUDARTAPI __cudaUnregisterFatBinary(void** fatCubinHandle) {
  // The binary's functions stay registered: their host stubs unload with it, and a handle is never reused.
  delete fatCubinHandle;
}

SIM_CUDART_API void CUDARTAPI __cudaRegisterFunction(void**, const char* hostFun, char*, const char* deviceName, int,
                                                     uint3*, uint3*, dim3*, dim3*, int*) {
  std::lock_guard<std::mutex> lock(g_functions_mutex);
  functions()[hostFun] = deviceName;
}

// Device variables get no device storage (cudaGetSymbolAddress is not supported).
SIM_CUDART_API void CUDARTAPI __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}

SIM_CUDART_API char CUDARTAPI __cudaInitModule(void**) { return 1; }

SIM_CUDART_API unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                               struct CUstream_st* stream) {
  t_configurations.push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

SIM_CUDART_API cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                                                 void* stream) {
  if (t_configurations.empty()) return fail(cudaErrorMissingConfiguration);
  const CallConfiguration c = t_configurations.back();
  t_configurations.pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.shared_mem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

// A kernel handle is the host stub's address.
SIM_CUDART_API cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t* kernel, const void* func) {
  if (kernel == nullptr) return fail(cudaErrorInvalidValue);
  if (!registered(func)) return fail(cudaErrorInvalidDeviceFunction);
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(func));
  return cudaSuccess;
}

SIM_CUDART_API cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void**,
                                                        size_t, cudaStream_t stream) {
  return launch(kernel, gridDim, blockDim, stream);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void**, size_t,
                                                      cudaStream_t stream) {
  return launch(func, gridDim, blockDim, stream);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim,
                                                                 void**, size_t, cudaStream_t stream) {
  return launch(func, gridDim, blockDim, stream);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void**) {
  if (config == nullptr) return fail(cudaErrorInvalidValue);
  return launch(func, config->gridDim, config->blockDim, config->stream);
}

// Attributes of a kernel the device never compiled: the limits of the device, no registers or local memory.
SIM_CUDART_API cudaError_t CUDARTAPI cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  SIM_TRY(enter());
  if (attr == nullptr) return fail(cudaErrorInvalidValue);
  if (!registered(func)) return fail(cudaErrorInvalidDeviceFunction);
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = static_cast<int>(kMaxThreadsPerBlock);
  int version = device_attribute(cudaDevAttrComputeCapabilityMajor) * 10 +
                device_attribute(cudaDevAttrComputeCapabilityMinor);
  attr->ptxVersion = version;
  attr->binaryVersion = version;
  attr->maxDynamicSharedSizeBytes = device_attribute(cudaDevAttrMaxSharedMemoryPerBlock);
  return cudaSuccess;
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaFuncSetAttribute(const void* func, cudaFuncAttribute, int) {
  SIM_TRY(enter());
  return registered(func) ? cudaSuccess : fail(cudaErrorInvalidDeviceFunction);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaKernelSetAttributeForDevice(cudaKernel_t kernel, cudaFuncAttribute, int,
                                                                     int device) {
  SIM_TRY(enter_driver());
  if (!valid_device(device)) return fail(cudaErrorInvalidDevice);
  return registered(kernel) ? cudaSuccess : fail(cudaErrorInvalidDeviceFunction);
}

// As many blocks as the multiprocessor's thread and block limits allow (no registers or shared memory to limit it).
SIM_CUDART_API cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* numBlocks, const void* func, int blockSize, size_t, unsigned int) {
  SIM_TRY(enter());
  if (numBlocks == nullptr || blockSize <= 0) return fail(cudaErrorInvalidValue);
  if (!registered(func)) return fail(cudaErrorInvalidDeviceFunction);
  int warps = (blockSize + 31) / 32;
  int by_threads = device_attribute(cudaDevAttrMaxThreadsPerMultiProcessor) / (warps * 32);
  int by_blocks = device_attribute(cudaDevAttrMaxBlocksPerMultiprocessor);
  *numBlocks = by_blocks > 0 && by_blocks < by_threads ? by_blocks : by_threads;
  return cudaSuccess;
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func,
                                                                                   int blockSize,
                                                                                   size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                                cudaOccupancyDefault);
}
