// A neighbour that hooks CUDA too, like torch_memory_saver: preloaded, it takes over cudaMalloc and cudaFree
// and backs each allocation with the VMM API (an address range from cuMemAddressReserve, physical memory from
// cuMemCreate, mapped with cuMemMap), so that it could release and re-create the physical memory while the
// program keeps its pointers. Its driver calls bind to the first cu* definitions of the process.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <map>
#include <mutex>

namespace {

struct Block {
  CUmemGenericAllocationHandle handle;
  size_t size;
};

std::mutex blocks_mutex;
std::map<CUdeviceptr, Block> blocks;

}  // namespace

extern "C" __attribute__((visibility("default"))) cudaError_t cudaMalloc(void** ptr, size_t size) {
  CUdevice device;
  if (cuCtxGetDevice(&device) != CUDA_SUCCESS) return cudaErrorInitializationError;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t granularity = 0;
  if (cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS) {
    return cudaErrorInvalidValue;
  }
  size_t padded = (size + granularity - 1) / granularity * granularity;
  CUdeviceptr address = 0;
  CUmemGenericAllocationHandle handle = 0;
  if (cuMemAddressReserve(&address, padded, 0, 0, 0) != CUDA_SUCCESS) return cudaErrorMemoryAllocation;
  if (cuMemCreate(&handle, padded, &prop, 0) != CUDA_SUCCESS) {
    cuMemAddressFree(address, padded);
    return cudaErrorMemoryAllocation;
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (cuMemMap(address, padded, 0, handle, 0) != CUDA_SUCCESS || cuMemSetAccess(address, padded, &access, 1) != CUDA_SUCCESS) {
    return cudaErrorMemoryAllocation;
  }
  std::lock_guard lock(blocks_mutex);
  blocks[address] = {handle, padded};
  *ptr = reinterpret_cast<void*>(address);
  return cudaSuccess;
}

extern "C" __attribute__((visibility("default"))) cudaError_t cudaFree(void* ptr) {
  auto address = reinterpret_cast<CUdeviceptr>(ptr);
  Block block;
  {
    std::lock_guard lock(blocks_mutex);
    auto it = blocks.find(address);
    if (it == blocks.end()) {  // not ours (cudaFree(nullptr) creates the context): the runtime's
      static auto next = reinterpret_cast<cudaError_t (*)(void*)>(dlsym(RTLD_NEXT, "cudaFree"));
      return next ? next(ptr) : cudaErrorInitializationError;
    }
    block = it->second;
    blocks.erase(it);
  }
  cuMemUnmap(address, block.size);
  cuMemRelease(block.handle);
  cuMemAddressFree(address, block.size);
  return cudaSuccess;
}
