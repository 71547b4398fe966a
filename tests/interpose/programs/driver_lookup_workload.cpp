// Reaches the driver the way NCCL and PyTorch do: dlopen + cuGetProcAddress_v2, and the runtime's
// cudaGetDriverEntryPointByVersion; uses per-thread-stream async allocations and a VMM sequence.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>

#include "tests/support/program_check.h"

template <typename Fn>
Fn lookup(PFN_cuGetProcAddress_v12000 get, const char* name, int version, cuuint64_t flags = 0) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status;
  CHECK_OK(get(name, &fn, version, flags, &status));
  CHECK_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  return reinterpret_cast<Fn>(fn);
}

int main() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW);
  if (!driver) return 2;
  auto get = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(driver, "cuGetProcAddress_v2"));
  auto init = lookup<PFN_cuInit_v2000>(get, "cuInit", 2000);
  CHECK_OK(init(0));
  auto device_get = lookup<PFN_cuDeviceGet_v2000>(get, "cuDeviceGet", 2000);
  auto retain = lookup<PFN_cuDevicePrimaryCtxRetain_v7000>(get, "cuDevicePrimaryCtxRetain", 7000);
  auto set_current = lookup<PFN_cuCtxSetCurrent_v4000>(get, "cuCtxSetCurrent", 4000);
  CUdevice device;
  CHECK_OK(device_get(&device, 0));
  CUcontext context;
  CHECK_OK(retain(&context, device));
  CHECK_OK(set_current(context));

  // Plain and per-thread-stream allocations through cuGetProcAddress_v2.
  auto mem_alloc = lookup<PFN_cuMemAlloc_v3020>(get, "cuMemAlloc", 12000);
  auto mem_free = lookup<PFN_cuMemFree_v3020>(get, "cuMemFree", 12000);
  auto alloc_async = lookup<PFN_cuMemAllocAsync_v11020>(get, "cuMemAllocAsync", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  auto free_async = lookup<PFN_cuMemFreeAsync_v11020>(get, "cuMemFreeAsync", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  CUdeviceptr plain = 0, async = 0;
  CHECK_OK(mem_alloc(&plain, 7 << 20));
  CHECK_OK(alloc_async(&async, 3 << 20, nullptr));
  CHECK_OK(free_async(async, nullptr));
  CHECK_OK(mem_free(plain));

  // VMM: 4 MiB of physical memory mapped into a reserved range, then torn down.
  auto create = lookup<PFN_cuMemCreate_v10020>(get, "cuMemCreate", 12000);
  auto release = lookup<PFN_cuMemRelease_v10020>(get, "cuMemRelease", 12000);
  auto reserve = lookup<PFN_cuMemAddressReserve_v10020>(get, "cuMemAddressReserve", 12000);
  auto address_free = lookup<PFN_cuMemAddressFree_v10020>(get, "cuMemAddressFree", 12000);
  auto map = lookup<PFN_cuMemMap_v10020>(get, "cuMemMap", 12000);
  auto unmap = lookup<PFN_cuMemUnmap_v10020>(get, "cuMemUnmap", 12000);
  auto set_access = lookup<PFN_cuMemSetAccess_v10020>(get, "cuMemSetAccess", 12000);
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  CUmemGenericAllocationHandle handle;
  CHECK_OK(create(&handle, 4 << 20, &prop, 0));
  CUdeviceptr range = 0;
  CHECK_OK(reserve(&range, 8 << 20, 0, 0, 0));
  CHECK_OK(map(range, 4 << 20, 0, handle, 0));
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_OK(set_access(range, 4 << 20, &access, 1));
  CHECK_OK(unmap(range, 4 << 20));
  CHECK_OK(release(handle));
  CHECK_OK(address_free(range, 8 << 20));

  // Through the runtime, as PyTorch's expandable segments and NCCL do.
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult query;
  CHECK_OK(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, &query));
  CUdeviceptr through_runtime = 0;
  CHECK_OK(reinterpret_cast<PFN_cuMemAlloc_v3020>(fn)(&through_runtime, 5 << 20));
  CHECK_OK(cudaGetDriverEntryPointByVersion("cuMemFree", &fn, 12000, cudaEnableDefault, &query));
  CHECK_OK(reinterpret_cast<PFN_cuMemFree_v3020>(fn)(through_runtime));
  CHECK_OK(cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 12000, cudaEnablePerThreadDefaultStream, &query));
  CUdeviceptr ptsz = 0;
  CHECK_OK(reinterpret_cast<PFN_cuMemAllocAsync_v11020>(fn)(&ptsz, 6 << 20, nullptr));
  std::printf("ok\n");
  return 0;  // ptsz stays allocated: a leak of 6 MiB
}
