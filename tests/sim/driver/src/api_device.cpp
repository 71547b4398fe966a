// Initialization, versions, devices, primary contexts and the context stack.
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>

#include <strings.h>

#include "state.h"

using namespace gpumemtrace::sim;

namespace {

constexpr const char* kDeviceName = "gpumemtrace simulated device";

// Attribute values of a Hopper-class (compute capability 9.0) board. Every attribute cuda.h defines has a value
// (0 when not listed); values outside the enum are CUDA_ERROR_INVALID_VALUE.
int attribute_value(CUdevice_attribute attrib, const Device& dev) {
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1755000;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH: return 16384;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return dev.ordinal + 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 50 << 20;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 2;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: return dev.ordinal;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS: return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR: return 1;
    case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT: return 4;
    case CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS: return 1;
    case CU_DEVICE_ATTRIBUTE_NUMA_ID: return -1;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: return -1;
    default: return 0;
  }
}

// The same bytes the simulated NVML shows (sim_config.h).
CUuuid device_uuid(int ordinal) {
  CUuuid uuid;
  std::array<unsigned char, 16> bytes = sim_device_uuid(ordinal);
  for (size_t i = 0; i < bytes.size(); i++) uuid.bytes[i] = static_cast<char>(bytes[i]);
  return uuid;
}

void pci_bus_id(int ordinal, char* out, int len) { std::snprintf(out, len, "0000:%02x:00.0", ordinal + 1); }

// Resolves a device ordinal after the usual checks.
#define SIM_DEVICE(var, ordinal)                         \
  SIM_REQUIRE_INIT();                                    \
  Device* var = device(ordinal);                         \
  if (!var) return CUDA_ERROR_INVALID_DEVICE

CUresult ctx_create(CUcontext* pctx, unsigned int flags, CUdevice dev_ordinal) {
  SIM_DEVICE(dev, dev_ordinal);
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  {
    std::lock_guard lock(dev->mu);
    if (!dev->charge(dev->context_bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  }
  auto* ctx = new_handle<CUctx_st>();
  ctx->dev = dev;
  ctx->flags = flags;
  ctx->id = next_id();
  ctx_stack().push_back(ctx);
  *pctx = ctx;
  return CUDA_SUCCESS;
}

CUresult ctx_sync(CUctx_st* ctx) {
  release_pools_to_threshold(*ctx->dev);
  return CUDA_SUCCESS;
}

}  // namespace

CUAPI cuInit(unsigned int Flags) {
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return initialize();
}

CUAPI cuDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = kDriverVersion;
  return CUDA_SUCCESS;
}

CUAPI cuDeviceGetCount(int* count) {
  SIM_REQUIRE_INIT();
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = device_count();
  return CUDA_SUCCESS;
}

CUAPI cuDeviceGet(CUdevice* dev, int ordinal) {
  SIM_REQUIRE_INIT();
  if (!dev) return CUDA_ERROR_INVALID_VALUE;
  if (!device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *dev = ordinal;
  return CUDA_SUCCESS;
}

CUAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  SIM_DEVICE(d, dev);
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, len, "%s", kDeviceName);
  return CUDA_SUCCESS;
}

CUAPI cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  SIM_DEVICE(d, dev);
  if (!uuid) return CUDA_ERROR_INVALID_VALUE;
  *uuid = device_uuid(d->ordinal);
  return CUDA_SUCCESS;
}
CUAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

CUAPI cuDeviceGetLuid(char*, unsigned int*, CUdevice dev) {
  SIM_DEVICE(d, dev);
  return CUDA_ERROR_NOT_SUPPORTED;  // Windows only
}

CUAPI cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  SIM_DEVICE(d, dev);
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  *bytes = d->capacity;
  return CUDA_SUCCESS;
}
CUAPI cuDeviceTotalMem(unsigned int* bytes, CUdevice dev) {
  size_t total = 0;
  CUresult r = cuDeviceTotalMem_v2(bytes ? &total : nullptr, dev);
  if (r == CUDA_SUCCESS) *bytes = total > 0xffffffffu ? 0xffffffffu : static_cast<unsigned int>(total);
  return r;
}

CUAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  SIM_DEVICE(d, dev);
  if (!pi || attrib < CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
    return CUDA_ERROR_INVALID_VALUE;
  *pi = attribute_value(attrib, *d);
  return CUDA_SUCCESS;
}

CUAPI cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  SIM_DEVICE(d, dev);
  if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
  *major = 9;
  *minor = 0;
  return CUDA_SUCCESS;
}

CUAPI cuDeviceGetProperties(CUdevprop* prop, CUdevice dev) {
  SIM_DEVICE(d, dev);
  if (!prop) return CUDA_ERROR_INVALID_VALUE;
  *prop = CUdevprop{};
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->sharedMemPerBlock = 49152;
  prop->totalConstantMemory = 65536;
  prop->SIMDWidth = 32;
  prop->memPitch = 2147483647;
  prop->regsPerBlock = 65536;
  prop->clockRate = 1755000;
  prop->textureAlign = 512;
  return CUDA_SUCCESS;
}

CUAPI cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  SIM_DEVICE(d, dev);
  if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  pci_bus_id(d->ordinal, pciBusId, len);
  return CUDA_SUCCESS;
}

CUAPI cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  SIM_REQUIRE_INIT();
  if (!dev || !pciBusId) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < device_count(); i++) {
    char id[32];
    pci_bus_id(i, id, sizeof id);
    // "0000:01:00.0" and the short form "01:00.0" both name device 0; hex digits in either case.
    if (strcasecmp(pciBusId, id) == 0 || (std::strlen(pciBusId) == 7 && strcasecmp(pciBusId, id + 5) == 0)) {
      *dev = i;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_DEVICE;
}

CUAPI cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice, CUdevice dstDevice) {
  SIM_REQUIRE_INIT();
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  if (!device(srcDevice) || !device(dstDevice)) return CUDA_ERROR_INVALID_DEVICE;
  if (srcDevice == dstDevice) return CUDA_ERROR_INVALID_DEVICE;
  (void)attrib;
  *value = 0;  // no peer links between simulated devices
  return CUDA_SUCCESS;
}

CUAPI cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  SIM_REQUIRE_INIT();
  if (!canAccessPeer) return CUDA_ERROR_INVALID_VALUE;
  if (!device(dev) || !device(peerDev)) return CUDA_ERROR_INVALID_DEVICE;
  *canAccessPeer = 0;
  return CUDA_SUCCESS;
}

// ---- primary contexts -----------------------------------------------------------------------------------------

CUAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  SIM_DEVICE(d, dev);
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(d->mu);
  if (d->primary_refs == 0 && !d->charge(d->context_bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  d->primary_refs++;
  *pctx = &d->primary;
  return CUDA_SUCCESS;
}

CUAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  SIM_DEVICE(d, dev);
  std::lock_guard lock(d->mu);
  if (d->primary_refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (--d->primary_refs == 0) d->uncharge(d->context_bytes);
  return CUDA_SUCCESS;
}
CUAPI cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

CUAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  SIM_DEVICE(d, dev);
  if (flags & ~(CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_COREDUMP_ENABLE |
                CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS))
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(d->mu);
  d->primary_flags = flags;
  d->primary.flags = flags;
  return CUDA_SUCCESS;
}
CUAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) { return cuDevicePrimaryCtxSetFlags_v2(dev, flags); }

CUAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  SIM_DEVICE(d, dev);
  if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(d->mu);
  *flags = d->primary_flags;
  *active = d->primary_refs > 0;
  return CUDA_SUCCESS;
}

CUAPI cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  SIM_DEVICE(d, dev);
  return reset_primary_context(*d);
}
CUAPI cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }

// ---- contexts -------------------------------------------------------------------------------------------------

CUAPI cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) { return ctx_create(pctx, flags, dev); }
CUAPI cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) { return ctx_create(pctx, flags, dev); }
CUAPI cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags,
                     CUdevice dev) {
  if (numParams < 0 || (numParams > 0 && !paramsArray)) return CUDA_ERROR_INVALID_VALUE;
  return ctx_create(pctx, flags, dev);
}
CUAPI cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* ctxCreateParams, unsigned int flags, CUdevice dev) {
  (void)ctxCreateParams;
  return ctx_create(pctx, flags, dev);
}

CUAPI cuCtxDestroy_v2(CUcontext ctx) {
  SIM_REQUIRE_INIT();
  if (!valid(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx->primary) return CUDA_ERROR_INVALID_CONTEXT;
  auto& stack = ctx_stack();
  std::erase(stack, ctx);
  {
    std::lock_guard lock(ctx->dev->mu);
    ctx->dev->uncharge(ctx->dev->context_bytes);
  }
  // The handle is kept (marked dead) so that a stale copy reads as invalid.
  ctx->magic.store(0, std::memory_order_relaxed);
  return CUDA_SUCCESS;
}
CUAPI cuCtxDestroy(CUcontext ctx) { return cuCtxDestroy_v2(ctx); }

CUAPI cuCtxPushCurrent_v2(CUcontext ctx) {
  SIM_REQUIRE_INIT();
  if (!valid(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  ctx_stack().push_back(ctx);
  return CUDA_SUCCESS;
}
CUAPI cuCtxPushCurrent(CUcontext ctx) { return cuCtxPushCurrent_v2(ctx); }

CUAPI cuCtxPopCurrent_v2(CUcontext* pctx) {
  SIM_REQUIRE_INIT();
  auto& stack = ctx_stack();
  if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx) *pctx = stack.back();
  stack.pop_back();
  return CUDA_SUCCESS;
}
CUAPI cuCtxPopCurrent(CUcontext* pctx) { return cuCtxPopCurrent_v2(pctx); }

CUAPI cuCtxSetCurrent(CUcontext ctx) {
  SIM_REQUIRE_INIT();
  auto& stack = ctx_stack();
  if (!ctx) {
    if (!stack.empty()) stack.pop_back();
    return CUDA_SUCCESS;
  }
  if (!valid(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  if (stack.empty())
    stack.push_back(ctx);
  else
    stack.back() = ctx;
  return CUDA_SUCCESS;
}

CUAPI cuCtxGetCurrent(CUcontext* pctx) {
  SIM_REQUIRE_INIT();
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  *pctx = current_ctx();
  return CUDA_SUCCESS;
}

CUAPI cuCtxGetDevice(CUdevice* device) {
  SIM_REQUIRE_CTX(ctx);
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  *device = ctx->dev->ordinal;
  return CUDA_SUCCESS;
}

CUAPI cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  SIM_REQUIRE_INIT();
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  if (!ctx) ctx = current_ctx();
  if (!valid(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  *device = ctx->dev->ordinal;
  return CUDA_SUCCESS;
}

CUAPI cuCtxGetFlags(unsigned int* flags) {
  SIM_REQUIRE_CTX(ctx);
  if (!flags) return CUDA_ERROR_INVALID_VALUE;
  *flags = ctx->flags;
  return CUDA_SUCCESS;
}

CUAPI cuCtxSetFlags(unsigned int flags) {
  SIM_REQUIRE_CTX(ctx);
  ctx->flags = flags;
  return CUDA_SUCCESS;
}

CUAPI cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  SIM_REQUIRE_INIT();
  if (!ctxId) return CUDA_ERROR_INVALID_VALUE;
  if (!ctx) ctx = current_ctx();
  if (!valid(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  *ctxId = ctx->id;
  return CUDA_SUCCESS;
}

CUAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  SIM_REQUIRE_INIT();
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  if (!ctx) ctx = current_ctx();
  if (!valid(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  *version = 12010;  // the context ABI version NVIDIA's 12.x/13.x drivers report
  return CUDA_SUCCESS;
}

CUAPI cuCtxSynchronize(void) {
  SIM_REQUIRE_CTX(ctx);
  return ctx_sync(ctx);
}

CUAPI cuCtxSynchronize_v2(CUcontext ctx) {
  SIM_REQUIRE_INIT();
  if (!ctx) ctx = current_ctx();
  if (!valid(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  return ctx_sync(ctx);
}

CUAPI cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  SIM_REQUIRE_CTX(ctx);
  if (leastPriority) *leastPriority = 0;
  if (greatestPriority) *greatestPriority = -5;
  return CUDA_SUCCESS;
}

CUAPI cuCtxGetLimit(size_t* pvalue, CUlimit limit) {
  SIM_REQUIRE_CTX(ctx);
  if (!pvalue) return CUDA_ERROR_INVALID_VALUE;
  switch (limit) {
    case CU_LIMIT_STACK_SIZE: *pvalue = 1024; break;
    case CU_LIMIT_PRINTF_FIFO_SIZE: *pvalue = 1 << 20; break;
    case CU_LIMIT_MALLOC_HEAP_SIZE: *pvalue = 8 << 20; break;
    case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: *pvalue = 2048; break;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY: *pvalue = 64; break;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: *pvalue = 0; break;
    default: return CUDA_ERROR_UNSUPPORTED_LIMIT;
  }
  return CUDA_SUCCESS;
}

CUAPI cuCtxSetLimit(CUlimit limit, size_t value) {
  size_t current;
  CUresult r = cuCtxGetLimit(&current, limit);
  (void)value;
  return r;  // accepted, not enforced
}

CUAPI cuCtxGetCacheConfig(CUfunc_cache* pconfig) {
  SIM_REQUIRE_CTX(ctx);
  if (!pconfig) return CUDA_ERROR_INVALID_VALUE;
  *pconfig = CU_FUNC_CACHE_PREFER_NONE;
  return CUDA_SUCCESS;
}

CUAPI cuCtxSetCacheConfig(CUfunc_cache config) {
  SIM_REQUIRE_CTX(ctx);
  (void)config;
  return CUDA_SUCCESS;
}

CUAPI cuCtxResetPersistingL2Cache(void) {
  SIM_REQUIRE_CTX(ctx);
  return CUDA_SUCCESS;
}

CUAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  SIM_REQUIRE_CTX(ctx);
  if (!valid(peerContext) || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
}

CUAPI cuCtxDisablePeerAccess(CUcontext peerContext) {
  SIM_REQUIRE_CTX(ctx);
  if (!valid(peerContext)) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
}

CUAPI cuGetExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
  (void)pExportTableId;
  if (ppExportTable) *ppExportTable = nullptr;
  // NVIDIA's private interfaces are not imitated; say so once, since the caller's own error rarely does.
  static std::atomic<bool> said{false};
  if (!said.exchange(true, std::memory_order_relaxed))
    std::fprintf(stderr, "gpumemtrace simulated CUDA driver: cuGetExportTable is not supported: NVIDIA's private "
                         "driver interfaces (which cuBLAS, cuDNN and NCCL need) are not simulated\n");
  return CUDA_ERROR_NOT_SUPPORTED;
}
