// Device management: count, current device, properties and attributes, versions, synchronize/reset, device pools.
#include <cstddef>
#include <cstring>

#include <cuda_profiler_api.h>

#include "runtime.h"

using namespace sim_cudart;

namespace {

// A cudaDeviceProp field filled from one driver attribute (fields are int, unsigned or size_t).
struct PropField {
  std::size_t offset;
  std::size_t size;
  CUdevice_attribute attribute;
};
#define SIM_PROP(field, attr) {offsetof(cudaDeviceProp, field), sizeof(cudaDeviceProp::field), CU_DEVICE_ATTRIBUTE_##attr}
#define SIM_PROP_AT(field, i, attr) {offsetof(cudaDeviceProp, field[i]), sizeof(int), CU_DEVICE_ATTRIBUTE_##attr}
constexpr PropField kPropFields[] = {
    SIM_PROP(sharedMemPerBlock, MAX_SHARED_MEMORY_PER_BLOCK),
    SIM_PROP(regsPerBlock, MAX_REGISTERS_PER_BLOCK),
    SIM_PROP(warpSize, WARP_SIZE),
    SIM_PROP(memPitch, MAX_PITCH),
    SIM_PROP(maxThreadsPerBlock, MAX_THREADS_PER_BLOCK),
    SIM_PROP_AT(maxThreadsDim, 0, MAX_BLOCK_DIM_X),
    SIM_PROP_AT(maxThreadsDim, 1, MAX_BLOCK_DIM_Y),
    SIM_PROP_AT(maxThreadsDim, 2, MAX_BLOCK_DIM_Z),
    SIM_PROP_AT(maxGridSize, 0, MAX_GRID_DIM_X),
    SIM_PROP_AT(maxGridSize, 1, MAX_GRID_DIM_Y),
    SIM_PROP_AT(maxGridSize, 2, MAX_GRID_DIM_Z),
    SIM_PROP(totalConstMem, TOTAL_CONSTANT_MEMORY),
    SIM_PROP(major, COMPUTE_CAPABILITY_MAJOR),
    SIM_PROP(minor, COMPUTE_CAPABILITY_MINOR),
    SIM_PROP(textureAlignment, TEXTURE_ALIGNMENT),
    SIM_PROP(texturePitchAlignment, TEXTURE_PITCH_ALIGNMENT),
    SIM_PROP(multiProcessorCount, MULTIPROCESSOR_COUNT),
    SIM_PROP(integrated, INTEGRATED),
    SIM_PROP(canMapHostMemory, CAN_MAP_HOST_MEMORY),
    SIM_PROP(surfaceAlignment, SURFACE_ALIGNMENT),
    SIM_PROP(concurrentKernels, CONCURRENT_KERNELS),
    SIM_PROP(ECCEnabled, ECC_ENABLED),
    SIM_PROP(pciBusID, PCI_BUS_ID),
    SIM_PROP(pciDeviceID, PCI_DEVICE_ID),
    SIM_PROP(pciDomainID, PCI_DOMAIN_ID),
    SIM_PROP(tccDriver, TCC_DRIVER),
    SIM_PROP(asyncEngineCount, ASYNC_ENGINE_COUNT),
    SIM_PROP(unifiedAddressing, UNIFIED_ADDRESSING),
    SIM_PROP(memoryBusWidth, GLOBAL_MEMORY_BUS_WIDTH),
    SIM_PROP(l2CacheSize, L2_CACHE_SIZE),
    SIM_PROP(persistingL2CacheMaxSize, MAX_PERSISTING_L2_CACHE_SIZE),
    SIM_PROP(maxThreadsPerMultiProcessor, MAX_THREADS_PER_MULTIPROCESSOR),
    SIM_PROP(streamPrioritiesSupported, STREAM_PRIORITIES_SUPPORTED),
    SIM_PROP(globalL1CacheSupported, GLOBAL_L1_CACHE_SUPPORTED),
    SIM_PROP(localL1CacheSupported, LOCAL_L1_CACHE_SUPPORTED),
    SIM_PROP(sharedMemPerMultiprocessor, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
    SIM_PROP(regsPerMultiprocessor, MAX_REGISTERS_PER_MULTIPROCESSOR),
    SIM_PROP(managedMemory, MANAGED_MEMORY),
    SIM_PROP(isMultiGpuBoard, MULTI_GPU_BOARD),
    SIM_PROP(multiGpuBoardGroupID, MULTI_GPU_BOARD_GROUP_ID),
    SIM_PROP(hostNativeAtomicSupported, HOST_NATIVE_ATOMIC_SUPPORTED),
    SIM_PROP(pageableMemoryAccess, PAGEABLE_MEMORY_ACCESS),
    SIM_PROP(concurrentManagedAccess, CONCURRENT_MANAGED_ACCESS),
    SIM_PROP(computePreemptionSupported, COMPUTE_PREEMPTION_SUPPORTED),
    SIM_PROP(canUseHostPointerForRegisteredMem, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM),
    SIM_PROP(cooperativeLaunch, COOPERATIVE_LAUNCH),
    SIM_PROP(sharedMemPerBlockOptin, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
    SIM_PROP(pageableMemoryAccessUsesHostPageTables, PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES),
    SIM_PROP(directManagedMemAccessFromHost, DIRECT_MANAGED_MEM_ACCESS_FROM_HOST),
    SIM_PROP(maxBlocksPerMultiProcessor, MAX_BLOCKS_PER_MULTIPROCESSOR),
    SIM_PROP(accessPolicyMaxWindowSize, MAX_ACCESS_POLICY_WINDOW_SIZE),
    SIM_PROP(reservedSharedMemPerBlock, RESERVED_SHARED_MEMORY_PER_BLOCK),
    SIM_PROP(hostRegisterSupported, HOST_REGISTER_SUPPORTED),
    SIM_PROP(sparseCudaArraySupported, SPARSE_CUDA_ARRAY_SUPPORTED),
    SIM_PROP(hostRegisterReadOnlySupported, READ_ONLY_HOST_REGISTER_SUPPORTED),
    SIM_PROP(timelineSemaphoreInteropSupported, TIMELINE_SEMAPHORE_INTEROP_SUPPORTED),
    SIM_PROP(memoryPoolsSupported, MEMORY_POOLS_SUPPORTED),
    SIM_PROP(gpuDirectRDMASupported, GPU_DIRECT_RDMA_SUPPORTED),
    SIM_PROP(gpuDirectRDMAFlushWritesOptions, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS),
    SIM_PROP(gpuDirectRDMAWritesOrdering, GPU_DIRECT_RDMA_WRITES_ORDERING),
    SIM_PROP(memoryPoolSupportedHandleTypes, MEMPOOL_SUPPORTED_HANDLE_TYPES),
    SIM_PROP(deferredMappingCudaArraySupported, DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED),
    SIM_PROP(ipcEventSupported, IPC_EVENT_SUPPORTED),
    SIM_PROP(clusterLaunch, CLUSTER_LAUNCH),
    SIM_PROP(unifiedFunctionPointers, UNIFIED_FUNCTION_POINTERS),
    SIM_PROP(deviceNumaConfig, NUMA_CONFIG),
    SIM_PROP(deviceNumaId, NUMA_ID),
    SIM_PROP(mpsEnabled, MPS_ENABLED),
    SIM_PROP(hostNumaId, HOST_NUMA_ID),
    SIM_PROP(gpuPciDeviceID, GPU_PCI_DEVICE_ID),
    SIM_PROP(gpuPciSubsystemID, GPU_PCI_SUBSYSTEM_ID),
    SIM_PROP(hostNumaMultinodeIpcSupported, HOST_NUMA_MULTINODE_IPC_SUPPORTED),
};
#undef SIM_PROP
#undef SIM_PROP_AT

// The driver's answer for one attribute; an attribute it does not know (CUDA_ERROR_INVALID_VALUE) reads as 0.
cudaError_t read_attribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  auto get = SIM_DRV(cuDeviceGetAttribute);
  if (get == nullptr) return fail(cudaErrorNotSupported);
  CUresult r = get(value, attribute, device);
  if (r == CUDA_ERROR_INVALID_VALUE) *value = 0;
  else if (r != CUDA_SUCCESS) return fail(to_runtime_error(r));
  return cudaSuccess;
}

// The device argument of a call that needs only the driver.
cudaError_t enter_device(int device) {
  SIM_TRY(enter_driver());
  return valid_device(device) ? cudaSuccess : fail(cudaErrorInvalidDevice);
}

}  // namespace

SIM_CUDART_API cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
  cudaError_t e = driver_init();
  if (e == cudaErrorNoDevice && count != nullptr) *count = 0;
  if (e != cudaSuccess) return fail(e);
  if (count == nullptr) return fail(cudaErrorInvalidValue);
  *count = device_count();
  return cudaSuccess;
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaSetDevice(int device) {
  SIM_TRY(enter_device(device));
  ThreadState& t = t_state;
  t.device = device;
  t.epoch = 0;
  return activate_context(t);  // since CUDA 12, cudaSetDevice initializes the device's primary context
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaGetDevice(int* device) {
  SIM_TRY(enter_driver());
  if (device == nullptr) return fail(cudaErrorInvalidValue);
  *device = t_state.device;
  return cudaSuccess;
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  SIM_TRY(enter_device(device));
  if (prop == nullptr) return fail(cudaErrorInvalidValue);
  std::memset(prop, 0, sizeof *prop);
  CUdevice dev = cu_device(device);
  SIM_TRY(SIM_CALL(cuDeviceGetName, prop->name, static_cast<int>(sizeof prop->name), dev));
  SIM_TRY(SIM_CALL(cuDeviceTotalMem_v2, &prop->totalGlobalMem, dev));
  CUuuid uuid{};
  SIM_TRY(SIM_CALL(cuDeviceGetUuid, &uuid, dev));
  std::memcpy(&prop->uuid, &uuid, sizeof prop->uuid);
  auto* base = reinterpret_cast<unsigned char*>(prop);
  for (const PropField& f : kPropFields) {
    int value = 0;
    SIM_TRY(read_attribute(&value, f.attribute, dev));
    if (f.size == sizeof(std::size_t)) {
      auto wide = static_cast<std::size_t>(value);
      std::memcpy(base + f.offset, &wide, sizeof wide);
    } else {
      std::memcpy(base + f.offset, &value, sizeof value);
    }
  }
  return cudaSuccess;
}

// cudaDeviceAttr and CUdevice_attribute share their values.
SIM_CUDART_API cudaError_t CUDARTAPI cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  SIM_TRY(enter_device(device));
  if (value == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuDeviceGetAttribute, value, static_cast<CUdevice_attribute>(attr), cu_device(device));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaDeviceSynchronize(void) {
  SIM_TRY(enter());
  return SIM_CALL(cuCtxSynchronize);
}

// Resets the current device's primary context; every thread re-activates it on its next call.
SIM_CUDART_API cudaError_t CUDARTAPI cudaDeviceReset(void) {
  SIM_TRY(enter());
  int device = t_state.device;
  // cuDevicePrimaryCtxReset@7000 has no public PFN typedef; its signature is that of the _v2 (@11000).
  auto reset = reinterpret_cast<PFN_cuDevicePrimaryCtxReset_v11000>(g_fn[R_cuDevicePrimaryCtxReset]);
  SIM_TRY(call_driver(reset, cu_device(device)));
  forget_context(device);
  return cudaSuccess;
}

// Without a driver NVIDIA's runtime answers 0 and cudaSuccess, whatever the initialization error.
SIM_CUDART_API cudaError_t CUDARTAPI cudaDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return fail(cudaErrorInvalidValue);
  driver_init();
  auto get = SIM_DRV(cuDriverGetVersion);
  if (get == nullptr || get(driverVersion) != CUDA_SUCCESS) *driverVersion = 0;
  return cudaSuccess;
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr) return fail(cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) {
  SIM_TRY(enter_device(device));
  return SIM_CALL(cuDeviceGetDefaultMemPool, memPool, cu_device(device));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
  SIM_TRY(enter_device(device));
  return SIM_CALL(cuDeviceSetMemPool, cu_device(device), memPool);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device) {
  SIM_TRY(enter_device(device));
  return SIM_CALL(cuDeviceGetMemPool, memPool, cu_device(device));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  SIM_TRY(enter_device(device));
  if (pciBusId == nullptr || len <= 0) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuDeviceGetPCIBusId, pciBusId, len, cu_device(device));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  SIM_TRY(enter());
  return SIM_CALL(cuCtxGetStreamPriorityRange, leastPriority, greatestPriority);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
  SIM_TRY(enter_device(device));
  if (!valid_device(peerDevice)) return fail(cudaErrorInvalidDevice);
  if (canAccessPeer == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuDeviceCanAccessPeer, canAccessPeer, cu_device(device), cu_device(peerDevice));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  SIM_TRY(enter());
  if (!valid_device(peerDevice)) return fail(cudaErrorInvalidDevice);
  CUcontext peer = nullptr;
  SIM_TRY(primary_context(peerDevice, &peer));
  return SIM_CALL(cuCtxEnablePeerAccess, peer, flags);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaProfilerStart(void) {
  SIM_TRY(enter());
  return SIM_CALL(cuProfilerStart);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaProfilerStop(void) {
  SIM_TRY(enter());
  return SIM_CALL(cuProfilerStop);
}
