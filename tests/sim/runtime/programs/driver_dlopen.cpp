// A program that reaches the driver the way PyTorch's expandable segments and NCCL do: dlopen("libcuda.so.1"),
// one dlsym of cuGetProcAddress_v2, every other entry point through it. It allocates with cuMemAlloc, with VMM
// (cuMemCreate/cuMemAddressReserve/cuMemMap/cuMemSetAccess) and with cuMemAllocAsync on the per-thread stream.
//
// Every line is `<record> key=value ...`:
//   lookup name=<symbol> version=<v> flags=<f> result=<code> status=<query result> resolved=<exported symbol>
//   mem step=<name> free=<bytes> total=<bytes>                          (cuMemGetInfo after each step)
//   alloc api=<api> kind=<device|vmm|async> size=<bytes> result=<code>
//   free api=<api> kind=<device|vmm|async> size=<bytes> result=<code>
//   vmm op=<reserve|map|set_access|write_read|unmap|address_free> size=<bytes> result=<code>
//   summary allocations=<n> allocated_bytes=<n> frees=<n> freed_bytes=<n>
// `resolved` names the exported driver symbol whose address the lookup returned (dlsym on the same handle), or
// "other". Exit 0 when everything succeeded, 1 otherwise after `error call=<api> result=<code>`.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "alloc_log.h"

namespace {

constexpr size_t kPlainBytes = 1 << 20;     // cuMemAlloc
constexpr size_t kVmmBytes = 2 << 20;       // cuMemCreate: one 2 MiB granule
constexpr size_t kAsyncBytes = 3 << 20;     // cuMemAllocAsync on the per-thread default stream

void* g_handle = nullptr;
PFN_cuGetProcAddress_v12000 g_get = nullptr;

[[noreturn]] void die(const char* call, int result) {
  std::printf("error call=%s result=%d\n", call, result);
  std::exit(1);
}

void ok(const char* call, CUresult r) {
  if (r != CUDA_SUCCESS) die(call, r);
}

// One cuGetProcAddress_v2 request; `candidates` are the exported symbols it may select.
template <class Fn>
Fn lookup(const char* name, int version, cuuint64_t flags, std::initializer_list<const char*> candidates) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult r = g_get(name, &fn, version, flags, &status);
  const char* resolved = "other";
  for (const char* c : candidates)
    if (fn != nullptr && dlsym(g_handle, c) == fn) resolved = c;
  std::printf("lookup name=%s version=%d flags=%llu result=%d status=%d resolved=%s\n", name, version,
              static_cast<unsigned long long>(flags), static_cast<int>(r), static_cast<int>(status), resolved);
  if (r != CUDA_SUCCESS || fn == nullptr) die("cuGetProcAddress_v2", r);
  return reinterpret_cast<Fn>(fn);
}

PFN_cuMemGetInfo_v3020 g_mem_get_info = nullptr;

void mem(const char* step) {
  size_t free_bytes = 0, total_bytes = 0;
  ok("cuMemGetInfo", g_mem_get_info(&free_bytes, &total_bytes));
  std::printf("mem step=%s free=%zu total=%zu\n", step, free_bytes, total_bytes);
}

void logged(const char* record, const char* api, const char* kind, size_t size, CUresult r) {
  if (!alloc_log::log(record, api, kind, size, r)) die(api, r);
}

void vmm(const char* op, size_t size, CUresult r) {
  std::printf("vmm op=%s size=%zu result=%d\n", op, size, static_cast<int>(r));
  ok(op, r);
}

}  // namespace

int main() {
  g_handle = dlopen("libcuda.so.1", RTLD_NOW);
  if (g_handle == nullptr) {
    std::printf("error call=dlopen message=%s\n", dlerror());
    return 1;
  }
  g_get = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(g_handle, "cuGetProcAddress_v2"));
  if (g_get == nullptr) die("dlsym", 0);

  constexpr int v = 12000;
  constexpr cuuint64_t ptsz = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  auto init = lookup<PFN_cuInit_v2000>("cuInit", v, 0, {"cuInit"});
  auto device_get = lookup<PFN_cuDeviceGet_v2000>("cuDeviceGet", v, 0, {"cuDeviceGet"});
  auto retain = lookup<PFN_cuDevicePrimaryCtxRetain_v7000>("cuDevicePrimaryCtxRetain", v, 0,
                                                           {"cuDevicePrimaryCtxRetain"});
  auto set_current = lookup<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent", v, 0, {"cuCtxSetCurrent"});
  auto mem_alloc = lookup<PFN_cuMemAlloc_v3020>("cuMemAlloc", v, 0, {"cuMemAlloc", "cuMemAlloc_v2"});
  auto mem_free = lookup<PFN_cuMemFree_v3020>("cuMemFree", v, 0, {"cuMemFree", "cuMemFree_v2"});
  auto create = lookup<PFN_cuMemCreate_v10020>("cuMemCreate", v, 0, {"cuMemCreate"});
  auto reserve = lookup<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve", v, 0, {"cuMemAddressReserve"});
  auto map = lookup<PFN_cuMemMap_v10020>("cuMemMap", v, 0, {"cuMemMap"});
  auto set_access = lookup<PFN_cuMemSetAccess_v10020>("cuMemSetAccess", v, 0, {"cuMemSetAccess"});
  auto unmap = lookup<PFN_cuMemUnmap_v10020>("cuMemUnmap", v, 0, {"cuMemUnmap"});
  auto release = lookup<PFN_cuMemRelease_v10020>("cuMemRelease", v, 0, {"cuMemRelease"});
  auto address_free = lookup<PFN_cuMemAddressFree_v10020>("cuMemAddressFree", v, 0, {"cuMemAddressFree"});
  auto alloc_async = lookup<PFN_cuMemAllocAsync_v11020>("cuMemAllocAsync", v, ptsz,
                                                        {"cuMemAllocAsync", "cuMemAllocAsync_ptsz"});
  auto free_async = lookup<PFN_cuMemFreeAsync_v11020>("cuMemFreeAsync", v, ptsz,
                                                      {"cuMemFreeAsync", "cuMemFreeAsync_ptsz"});
  auto synchronize = lookup<PFN_cuStreamSynchronize_v2000>("cuStreamSynchronize", v, ptsz,
                                                           {"cuStreamSynchronize", "cuStreamSynchronize_ptsz"});
  auto htod = lookup<PFN_cuMemcpyHtoD_v3020>("cuMemcpyHtoD", v, 0, {"cuMemcpyHtoD", "cuMemcpyHtoD_v2"});
  auto dtoh = lookup<PFN_cuMemcpyDtoH_v3020>("cuMemcpyDtoH", v, 0, {"cuMemcpyDtoH", "cuMemcpyDtoH_v2"});
  g_mem_get_info = lookup<PFN_cuMemGetInfo_v3020>("cuMemGetInfo", v, 0, {"cuMemGetInfo", "cuMemGetInfo_v2"});

  ok("cuInit", init(0));
  CUdevice dev = 0;
  ok("cuDeviceGet", device_get(&dev, 0));
  CUcontext ctx = nullptr;
  ok("cuDevicePrimaryCtxRetain", retain(&ctx, dev));
  ok("cuCtxSetCurrent", set_current(ctx));
  mem("start");

  CUdeviceptr plain = 0;
  logged("alloc", "cuMemAlloc", "device", kPlainBytes, mem_alloc(&plain, kPlainBytes));
  mem("after_cuMemAlloc");
  logged("free", "cuMemFree", "device", kPlainBytes, mem_free(plain));
  mem("after_cuMemFree");

  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  CUmemGenericAllocationHandle handle = 0;
  logged("alloc", "cuMemCreate", "vmm", kVmmBytes, create(&handle, kVmmBytes, &prop, 0));
  mem("after_cuMemCreate");
  CUdeviceptr va = 0;
  vmm("reserve", kVmmBytes, reserve(&va, kVmmBytes, 0, 0, 0));
  mem("after_cuMemAddressReserve");
  vmm("map", kVmmBytes, map(va, kVmmBytes, 0, handle, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  vmm("set_access", kVmmBytes, set_access(va, kVmmBytes, &access, 1));
  std::vector<unsigned char> out(kVmmBytes), in(kVmmBytes);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i * 7 + 3);
  CUresult copied = htod(va, out.data(), out.size());
  if (copied == CUDA_SUCCESS) copied = dtoh(in.data(), va, in.size());
  if (copied == CUDA_SUCCESS && std::memcmp(out.data(), in.data(), out.size()) != 0) copied = CUDA_ERROR_UNKNOWN;
  vmm("write_read", kVmmBytes, copied);
  mem("after_cuMemMap");
  vmm("unmap", kVmmBytes, unmap(va, kVmmBytes));
  logged("free", "cuMemRelease", "vmm", kVmmBytes, release(handle));
  mem("after_cuMemRelease");
  vmm("address_free", kVmmBytes, address_free(va, kVmmBytes));

  CUdeviceptr async = 0;
  logged("alloc", "cuMemAllocAsync", "async", kAsyncBytes, alloc_async(&async, kAsyncBytes, nullptr));
  ok("cuStreamSynchronize", synchronize(nullptr));
  mem("after_cuMemAllocAsync");
  logged("free", "cuMemFreeAsync", "async", kAsyncBytes, free_async(async, nullptr));
  ok("cuStreamSynchronize", synchronize(nullptr));
  mem("after_cuMemFreeAsync");

  alloc_log::summary();
  return 0;
}
