// The runtime calls that PyTorch makes beyond allocation (mode `kernels` of sim_prog_runtime_checks): registration
// and launch of a kernel the way nvcc-generated host code does it, the stream calls around kernels, host
// registration, 2D and peer copies, and a function the simulated device does not support. Output format: checks.h.
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <vector>

#include "checks.h"

// nvcc-generated host code's entry points (crt/host_runtime.h, crt/device_functions.h), declared only for nvcc.
extern "C" {
void** CUDARTAPI __cudaRegisterFatBinary(void* fatCubin);
void CUDARTAPI __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
void CUDARTAPI __cudaUnregisterFatBinary(void** fatCubinHandle);
void CUDARTAPI __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                                      const char* deviceName, int thread_limit, uint3* tid, uint3* bid, dim3* bDim,
                                      dim3* gDim, int* wSize);
unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                               struct CUstream_st* stream);
cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void* stream);
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t* kernel, const void* func);
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                         size_t sharedMem, cudaStream_t stream);
}

namespace checks {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// A host stub like nvcc's: its address names the kernel.
void fill_stub(float*, int) {}
void unregistered_stub() {}

int g_host_func_runs = 0;
int g_callback_status = -1;

void kernels() {
  static const char fake_binary[16] = {};
  void** module = __cudaRegisterFatBinary(const_cast<char*>(fake_binary));
  auto* stub = reinterpret_cast<const char*>(&fill_stub);
  __cudaRegisterFunction(module, stub, const_cast<char*>("fill"), "fill", -1, nullptr, nullptr, nullptr, nullptr,
                         nullptr);
  __cudaRegisterFatBinaryEnd(module);

  float* p = nullptr;
  expect("cudaMalloc", cudaMalloc(reinterpret_cast<void**>(&p), kMiB));
  expect("cudaMemset", cudaMemset(p, 0x7f, kMiB));
  cudaStream_t stream = nullptr;
  expect("cudaStreamCreate", cudaStreamCreate(&stream));

  // <<<grid, block, 0, stream>>> as nvcc emits it: push, then the stub pops and launches.
  __cudaPushCallConfiguration(dim3(4), dim3(256), 0, stream);
  dim3 grid, block;
  size_t shared = 1;
  cudaStream_t popped = nullptr;
  expect("__cudaPopCallConfiguration", __cudaPopCallConfiguration(&grid, &block, &shared, &popped));
  require("config_round_trips", grid.x == 4 && block.x == 256 && shared == 0 && popped == stream);
  expect("__cudaPopCallConfiguration(empty)", __cudaPopCallConfiguration(&grid, &block, &shared, &popped),
         cudaErrorMissingConfiguration);
  int n = 1024;
  void* args[] = {&p, &n};
  expect("cudaLaunchKernel", cudaLaunchKernel(stub, grid, block, args, 0, stream));
  cudaKernel_t kernel = nullptr;
  expect("__cudaGetKernel", __cudaGetKernel(&kernel, stub));
  expect("__cudaLaunchKernel", __cudaLaunchKernel(kernel, grid, block, args, 0, stream));
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  expect("cudaLaunchKernelExC", cudaLaunchKernelExC(&config, stub, args));
  expect("cudaLaunchKernel(unregistered)",
         cudaLaunchKernel(reinterpret_cast<const void*>(&unregistered_stub), grid, block, args, 0, stream),
         cudaErrorInvalidDeviceFunction);
  expect("cudaLaunchKernel(empty grid)", cudaLaunchKernel(stub, dim3(0), block, args, 0, stream),
         cudaErrorInvalidConfiguration);
  expect("cudaLaunchKernel(2048 threads)", cudaLaunchKernel(stub, grid, dim3(2048), args, 0, stream),
         cudaErrorInvalidConfiguration);
  expect("cudaGetLastError", cudaGetLastError(), cudaErrorInvalidConfiguration);

  // No device code ran: the memory holds what it held.
  unsigned char first = 0;
  expect("cudaMemcpy", cudaMemcpy(&first, p, 1, cudaMemcpyDeviceToHost));
  value("byte_after_launch", first);

  cudaFuncAttributes attributes{};
  expect("cudaFuncGetAttributes", cudaFuncGetAttributes(&attributes, stub));
  value("maxThreadsPerBlock", attributes.maxThreadsPerBlock);
  expect("cudaFuncSetAttribute", cudaFuncSetAttribute(stub, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024));
  int blocks = 0;
  expect("cudaOccupancyMaxActiveBlocksPerMultiprocessor",
         cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, stub, 256, 0));
  value("blocks_per_sm", blocks);

  // The stream calls around kernels.
  cudaEvent_t event = nullptr;
  expect("cudaEventCreate", cudaEventCreate(&event));
  expect("cudaEventRecordWithFlags", cudaEventRecordWithFlags(event, stream, cudaEventRecordDefault));
  expect("cudaStreamWaitEvent", cudaStreamWaitEvent(cudaStreamLegacy, event, 0));
  expect("cudaLaunchHostFunc", cudaLaunchHostFunc(stream, [](void* n) { ++*static_cast<int*>(n); }, &g_host_func_runs));
  expect("cudaStreamAddCallback",
         cudaStreamAddCallback(stream, [](cudaStream_t, cudaError_t status, void*) { g_callback_status = status; },
                               nullptr, 0));
  expect("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  value("host_func_runs", g_host_func_runs);
  value("callback_status", g_callback_status);
  int priority = 1, least = 1, greatest = 1;
  expect("cudaStreamGetPriority", cudaStreamGetPriority(stream, &priority));
  expect("cudaDeviceGetStreamPriorityRange", cudaDeviceGetStreamPriorityRange(&least, &greatest));
  value("priority", priority);
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusActive;
  expect("cudaStreamIsCapturing", cudaStreamIsCapturing(stream, &capturing));
  value("capture_status", capturing);
  unsigned long long id = 1;
  expect("cudaStreamGetCaptureInfo", cudaStreamGetCaptureInfo(stream, &capturing, &id));
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  expect("cudaThreadExchangeStreamCaptureMode", cudaThreadExchangeStreamCaptureMode(&mode));
  value("previous_capture_mode", mode);

  // Host registration and 2D copies (PyTorch's pinned memory and strided copies).
  std::vector<unsigned char> host(4096, 0xab);
  expect("cudaHostRegister", cudaHostRegister(host.data(), host.size(), cudaHostRegisterDefault));
  expect("cudaMemcpy2DAsync", cudaMemcpy2DAsync(p, 128, host.data(), 64, 64, 16, cudaMemcpyHostToDevice, stream));
  std::vector<unsigned char> back(128 * 16, 0);
  void* q = nullptr;
  expect("cudaMalloc", cudaMalloc(&q, back.size()));
  expect("cudaMemcpyPeerAsync", cudaMemcpyPeerAsync(q, 0, p, 0, back.size(), stream));
  expect("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  expect("cudaMemcpy", cudaMemcpy(back.data(), q, back.size(), cudaMemcpyDeviceToHost));
  expect("cudaFree", cudaFree(q));
  require("copy_2d_pitched", back[0] == 0xab && back[63] == 0xab && back[64] == 0x7f && back[128] == 0xab);
  expect("cudaHostUnregister", cudaHostUnregister(host.data()));
  char bus_id[32] = {};
  expect("cudaDeviceGetPCIBusId", cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0));
  value("pci_bus_id", bus_id);
  int can_access = -1;
  expect("cudaDeviceCanAccessPeer", cudaDeviceCanAccessPeer(&can_access, 0, 0));
  expect("cudaProfilerStart", cudaProfilerStart());
  expect("cudaProfilerStop", cudaProfilerStop());

  // What the device does not do: cudaErrorNotSupported, one line on stderr however often it is called.
  cudaGraphExec_t graph = nullptr;
  expect("cudaGraphLaunch", cudaGraphLaunch(graph, stream), cudaErrorNotSupported);
  expect("cudaGraphLaunch", cudaGraphLaunch(graph, stream), cudaErrorNotSupported);
  expect("cudaGetLastError", cudaGetLastError(), cudaErrorNotSupported);

  expect("cudaEventDestroy", cudaEventDestroy(event));
  expect("cudaStreamDestroy", cudaStreamDestroy(stream));
  expect("cudaFree", cudaFree(p));
  __cudaUnregisterFatBinary(module);
}

}  // namespace

int kernel_checks() {
  kernels();
  return g_failures;
}

}  // namespace checks
