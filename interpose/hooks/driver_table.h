// The driver entry points the tracer wraps, and the real functions behind them.
// A wrapper is exported under the driver's own name (for programs linked with -lcuda) and handed out in
// place of the real pointer wherever the program obtains one (dlsym, cuGetProcAddress).
#pragma once

#include <cstddef>

namespace gpumemtrace::interpose {

enum class DriverFn : int {
  GetProcAddress,      // the 4-argument lookup (CUDA 11.3 ABI)
  GetProcAddress_v2,   // the 5-argument lookup (CUDA 12.0 ABI)
  MemAlloc,
  MemAllocPitch,
  MemFree,
  MemAllocManaged,
  MemHostAlloc,
  MemAllocHost,
  MemFreeHost,
  MemAllocAsync,
  MemAllocAsync_ptsz,
  MemAllocFromPoolAsync,
  MemAllocFromPoolAsync_ptsz,
  MemFreeAsync,
  MemFreeAsync_ptsz,
  MemPoolCreate,
  MemPoolDestroy,
  MemPoolTrimTo,
  MemCreate,
  MemRelease,
  MemMap,
  MemUnmap,
  MemAddressReserve,
  MemAddressFree,
  MemGetInfo,
  ArrayCreate,
  Array3DCreate,
  ArrayDestroy,
  WrappedCount,
  // Called by the tracer itself, never wrapped.
  CtxGetDevice = WrappedCount,
  MemPoolGetAttribute,
  DeviceGetMemPool,
  DeviceGetDefaultMemPool,
  Count,
};

// The real driver function, resolving the driver on first use. nullptr if there is no driver.
void* real_driver_function(DriverFn fn);

// Learns where the real driver is from a function that belongs to it (first dlsym/cuGetProcAddress).
void adopt_driver(void* real_function);

// The wrapper for a real driver function pointer, or nullptr if it is not one we wrap.
void* wrapper_for_real(void* real_function);

// The device of the calling thread's current context, or -1.
int current_device();

// The wrapper exported under `name`, or nullptr if we do not wrap that name.
void* wrapper_for_name(const char* name);

}  // namespace gpumemtrace::interpose
