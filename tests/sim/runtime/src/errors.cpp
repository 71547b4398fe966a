// Errors: the driver-to-runtime mapping, names and strings, and the per-thread last error.
#include <array>

#include "runtime.h"

namespace sim_cudart {
namespace {

struct ErrorPair {
  CUresult driver;
  cudaError_t runtime;
};

// Every CUresult of CUDA 13.0's cuda.h and the runtime error NVIDIA's runtime reports for it. Anything not listed
// (CUDA_ERROR_CONTEXT_ALREADY_CURRENT, CUDA_ERROR_KEY_ROTATION, values from a newer driver) is cudaErrorUnknown.
constexpr ErrorPair kDriverErrors[] = {
    {CUDA_SUCCESS, cudaSuccess},
    {CUDA_ERROR_INVALID_VALUE, cudaErrorInvalidValue},
    {CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation},
    {CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError},
    {CUDA_ERROR_DEINITIALIZED, cudaErrorCudartUnloading},
    {CUDA_ERROR_PROFILER_DISABLED, cudaErrorProfilerDisabled},
    {CUDA_ERROR_PROFILER_NOT_INITIALIZED, cudaErrorProfilerNotInitialized},
    {CUDA_ERROR_PROFILER_ALREADY_STARTED, cudaErrorProfilerAlreadyStarted},
    {CUDA_ERROR_PROFILER_ALREADY_STOPPED, cudaErrorProfilerAlreadyStopped},
    {CUDA_ERROR_STUB_LIBRARY, cudaErrorStubLibrary},
    {CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, cudaErrorCallRequiresNewerDriver},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, cudaErrorDevicesUnavailable},
    {CUDA_ERROR_NO_DEVICE, cudaErrorNoDevice},
    {CUDA_ERROR_INVALID_DEVICE, cudaErrorInvalidDevice},
    {CUDA_ERROR_DEVICE_NOT_LICENSED, cudaErrorDeviceNotLicensed},
    {CUDA_ERROR_INVALID_IMAGE, cudaErrorInvalidKernelImage},
    {CUDA_ERROR_INVALID_CONTEXT, cudaErrorDeviceUninitialized},
    {CUDA_ERROR_MAP_FAILED, cudaErrorMapBufferObjectFailed},
    {CUDA_ERROR_UNMAP_FAILED, cudaErrorUnmapBufferObjectFailed},
    {CUDA_ERROR_ARRAY_IS_MAPPED, cudaErrorArrayIsMapped},
    {CUDA_ERROR_ALREADY_MAPPED, cudaErrorAlreadyMapped},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, cudaErrorNoKernelImageForDevice},
    {CUDA_ERROR_ALREADY_ACQUIRED, cudaErrorAlreadyAcquired},
    {CUDA_ERROR_NOT_MAPPED, cudaErrorNotMapped},
    {CUDA_ERROR_NOT_MAPPED_AS_ARRAY, cudaErrorNotMappedAsArray},
    {CUDA_ERROR_NOT_MAPPED_AS_POINTER, cudaErrorNotMappedAsPointer},
    {CUDA_ERROR_ECC_UNCORRECTABLE, cudaErrorECCUncorrectable},
    {CUDA_ERROR_UNSUPPORTED_LIMIT, cudaErrorUnsupportedLimit},
    {CUDA_ERROR_CONTEXT_ALREADY_IN_USE, cudaErrorDeviceAlreadyInUse},
    {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, cudaErrorPeerAccessUnsupported},
    {CUDA_ERROR_INVALID_PTX, cudaErrorInvalidPtx},
    {CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, cudaErrorInvalidGraphicsContext},
    {CUDA_ERROR_NVLINK_UNCORRECTABLE, cudaErrorNvlinkUncorrectable},
    {CUDA_ERROR_JIT_COMPILER_NOT_FOUND, cudaErrorJitCompilerNotFound},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, cudaErrorUnsupportedPtxVersion},
    {CUDA_ERROR_JIT_COMPILATION_DISABLED, cudaErrorJitCompilationDisabled},
    {CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, cudaErrorUnsupportedExecAffinity},
    {CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, cudaErrorUnsupportedDevSideSync},
    {CUDA_ERROR_CONTAINED, cudaErrorContained},
    {CUDA_ERROR_INVALID_SOURCE, cudaErrorInvalidSource},
    {CUDA_ERROR_FILE_NOT_FOUND, cudaErrorFileNotFound},
    {CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, cudaErrorSharedObjectSymbolNotFound},
    {CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, cudaErrorSharedObjectInitFailed},
    {CUDA_ERROR_OPERATING_SYSTEM, cudaErrorOperatingSystem},
    {CUDA_ERROR_INVALID_HANDLE, cudaErrorInvalidResourceHandle},
    {CUDA_ERROR_ILLEGAL_STATE, cudaErrorIllegalState},
    {CUDA_ERROR_LOSSY_QUERY, cudaErrorLossyQuery},
    {CUDA_ERROR_NOT_FOUND, cudaErrorSymbolNotFound},
    {CUDA_ERROR_NOT_READY, cudaErrorNotReady},
    {CUDA_ERROR_ILLEGAL_ADDRESS, cudaErrorIllegalAddress},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, cudaErrorLaunchOutOfResources},
    {CUDA_ERROR_LAUNCH_TIMEOUT, cudaErrorLaunchTimeout},
    {CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, cudaErrorLaunchIncompatibleTexturing},
    {CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, cudaErrorPeerAccessAlreadyEnabled},
    {CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cudaErrorPeerAccessNotEnabled},
    {CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, cudaErrorSetOnActiveProcess},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, cudaErrorContextIsDestroyed},
    {CUDA_ERROR_ASSERT, cudaErrorAssert},
    {CUDA_ERROR_TOO_MANY_PEERS, cudaErrorTooManyPeers},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cudaErrorHostMemoryAlreadyRegistered},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cudaErrorHostMemoryNotRegistered},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, cudaErrorHardwareStackError},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, cudaErrorIllegalInstruction},
    {CUDA_ERROR_MISALIGNED_ADDRESS, cudaErrorMisalignedAddress},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, cudaErrorInvalidAddressSpace},
    {CUDA_ERROR_INVALID_PC, cudaErrorInvalidPc},
    {CUDA_ERROR_LAUNCH_FAILED, cudaErrorLaunchFailure},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, cudaErrorCooperativeLaunchTooLarge},
    {CUDA_ERROR_TENSOR_MEMORY_LEAK, cudaErrorTensorMemoryLeak},
    {CUDA_ERROR_NOT_PERMITTED, cudaErrorNotPermitted},
    {CUDA_ERROR_NOT_SUPPORTED, cudaErrorNotSupported},
    {CUDA_ERROR_SYSTEM_NOT_READY, cudaErrorSystemNotReady},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, cudaErrorSystemDriverMismatch},
    {CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, cudaErrorCompatNotSupportedOnDevice},
    {CUDA_ERROR_MPS_CONNECTION_FAILED, cudaErrorMpsConnectionFailed},
    {CUDA_ERROR_MPS_RPC_FAILURE, cudaErrorMpsRpcFailure},
    {CUDA_ERROR_MPS_SERVER_NOT_READY, cudaErrorMpsServerNotReady},
    {CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, cudaErrorMpsMaxClientsReached},
    {CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, cudaErrorMpsMaxConnectionsReached},
    {CUDA_ERROR_MPS_CLIENT_TERMINATED, cudaErrorMpsClientTerminated},
    {CUDA_ERROR_CDP_NOT_SUPPORTED, cudaErrorCdpNotSupported},
    {CUDA_ERROR_CDP_VERSION_MISMATCH, cudaErrorCdpVersionMismatch},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cudaErrorStreamCaptureUnsupported},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cudaErrorStreamCaptureInvalidated},
    {CUDA_ERROR_STREAM_CAPTURE_MERGE, cudaErrorStreamCaptureMerge},
    {CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, cudaErrorStreamCaptureUnmatched},
    {CUDA_ERROR_STREAM_CAPTURE_UNJOINED, cudaErrorStreamCaptureUnjoined},
    {CUDA_ERROR_STREAM_CAPTURE_ISOLATION, cudaErrorStreamCaptureIsolation},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, cudaErrorStreamCaptureImplicit},
    {CUDA_ERROR_CAPTURED_EVENT, cudaErrorCapturedEvent},
    {CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, cudaErrorStreamCaptureWrongThread},
    {CUDA_ERROR_TIMEOUT, cudaErrorTimeout},
    {CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, cudaErrorGraphExecUpdateFailure},
    {CUDA_ERROR_EXTERNAL_DEVICE, cudaErrorExternalDevice},
    {CUDA_ERROR_INVALID_CLUSTER_SIZE, cudaErrorInvalidClusterSize},
    {CUDA_ERROR_FUNCTION_NOT_LOADED, cudaErrorFunctionNotLoaded},
    {CUDA_ERROR_INVALID_RESOURCE_TYPE, cudaErrorInvalidResourceType},
    {CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, cudaErrorInvalidResourceConfiguration},
    {CUDA_ERROR_UNKNOWN, cudaErrorUnknown},
};

// Dense form of kDriverErrors, indexed by CUresult (all of which are below 1000).
constexpr unsigned kMaxDriverError = 1000;
constexpr auto kDriverToRuntime = [] {
  std::array<cudaError_t, kMaxDriverError> map{};
  map.fill(cudaErrorUnknown);
  for (const ErrorPair& p : kDriverErrors) map[p.driver] = p.runtime;
  return map;
}();

struct ErrorText {
  int code;
  const char* name;
  const char* text;
};
constexpr ErrorText kErrorTexts[] = {
#include "error_table.inc"
};
constexpr const char* kUnrecognized = "unrecognized error code";

const ErrorText* find_text(cudaError_t e) {
  for (const ErrorText& t : kErrorTexts)
    if (t.code == static_cast<int>(e)) return &t;
  return nullptr;
}

}  // namespace

cudaError_t to_runtime_error(CUresult r) {
  auto i = static_cast<unsigned>(r);
  return i < kMaxDriverError ? kDriverToRuntime[i] : cudaErrorUnknown;
}

}  // namespace sim_cudart

using namespace sim_cudart;

SIM_CUDART_API const char* CUDARTAPI cudaGetErrorName(cudaError_t error) {
  const ErrorText* t = find_text(error);
  return t ? t->name : kUnrecognized;
}

SIM_CUDART_API const char* CUDARTAPI cudaGetErrorString(cudaError_t error) {
  const ErrorText* t = find_text(error);
  return t ? t->text : kUnrecognized;
}

// A failed initialization is sticky: NVIDIA's runtime keeps returning it (and loads the driver to find out).
SIM_CUDART_API cudaError_t CUDARTAPI cudaGetLastError(void) {
  if (cudaError_t init = driver_init(); init != cudaSuccess) return init;
  cudaError_t e = t_state.last_error;
  t_state.last_error = cudaSuccess;
  return e;
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaPeekAtLastError(void) {
  if (cudaError_t init = driver_init(); init != cudaSuccess) return init;
  return t_state.last_error;
}
