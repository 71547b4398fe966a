// Memory: every runtime allocation API, pools, cudaMemGetInfo, pointer attributes, memcpy/memset.
// Each call is the thread's context check, one driver call through the table and the error mapping.
#include "runtime.h"

using namespace sim_cudart;

namespace {

// Stores a driver allocation's address on success (`address` is read after the driver call has filled it).
template <class T>
cudaError_t deliver(cudaError_t e, T** out, const CUdeviceptr& address) {
  if (e == cudaSuccess) *out = reinterpret_cast<T*>(address);
  return e;
}

template <Row kRow>
cudaError_t malloc_async(void** devPtr, size_t size, cudaStream_t stream) {
  SIM_TRY(enter());
  if (devPtr == nullptr) return fail(cudaErrorInvalidValue);
  CUdeviceptr d = 0;
  auto fn = reinterpret_cast<pfn::R_cuMemAllocAsync>(g_fn[kRow]);
  return deliver(call_driver(fn, &d, size, cu(stream)), devPtr, d);
}

template <Row kRow>
cudaError_t malloc_from_pool_async(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
  SIM_TRY(enter());
  if (ptr == nullptr) return fail(cudaErrorInvalidValue);
  CUdeviceptr d = 0;
  auto fn = reinterpret_cast<pfn::R_cuMemAllocFromPoolAsync>(g_fn[kRow]);
  return deliver(call_driver(fn, &d, size, pool, cu(stream)), ptr, d);
}

template <Row kRow>
cudaError_t free_async(void* devPtr, cudaStream_t stream) {
  SIM_TRY(enter());
  return call_driver(reinterpret_cast<pfn::R_cuMemFreeAsync>(g_fn[kRow]), dptr(devPtr), cu(stream));
}

constexpr bool valid_kind(cudaMemcpyKind kind) {
  return kind >= cudaMemcpyHostToHost && kind <= cudaMemcpyDefault;
}

// With unified addressing one cuMemcpy serves every direction.
template <Row kRow>
cudaError_t memcpy_sync(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  SIM_TRY(enter());
  if (!valid_kind(kind)) return fail(cudaErrorInvalidMemcpyDirection);
  if (count == 0) return cudaSuccess;
  return call_driver(reinterpret_cast<pfn::R_cuMemcpy>(g_fn[kRow]), dptr(dst), dptr(src), count);
}

template <Row kRow>
cudaError_t memcpy_async(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  SIM_TRY(enter());
  if (!valid_kind(kind)) return fail(cudaErrorInvalidMemcpyDirection);
  if (count == 0) return cudaSuccess;
  return call_driver(reinterpret_cast<pfn::R_cuMemcpyAsync>(g_fn[kRow]), dptr(dst), dptr(src), count, cu(stream));
}

template <Row kRow>
cudaError_t memset_sync(void* devPtr, int value, size_t count) {
  SIM_TRY(enter());
  if (count == 0) return cudaSuccess;
  auto fn = reinterpret_cast<pfn::R_cuMemsetD8_v2>(g_fn[kRow]);
  return call_driver(fn, dptr(devPtr), static_cast<unsigned char>(value), count);
}

template <Row kRow>
cudaError_t memset_async(void* devPtr, int value, size_t count, cudaStream_t stream) {
  SIM_TRY(enter());
  if (count == 0) return cudaSuccess;
  auto fn = reinterpret_cast<pfn::R_cuMemsetD8Async>(g_fn[kRow]);
  return call_driver(fn, dptr(devPtr), static_cast<unsigned char>(value), count, cu(stream));
}

// A channel description as the driver's array format: equal-sized components, 8/16/32-bit integers or
// 16/32-bit floats.
cudaError_t array_format(const cudaChannelFormatDesc* desc, CUarray_format* format, unsigned* channels) {
  if (desc == nullptr) return cudaErrorInvalidValue;
  const int bits[4] = {desc->x, desc->y, desc->z, desc->w};
  unsigned n = 0;
  while (n < 4 && bits[n] != 0) ++n;
  for (unsigned i = 0; i < 4; ++i)
    if ((i < n && bits[i] != desc->x) || (i >= n && bits[i] != 0)) return cudaErrorInvalidChannelDescriptor;
  *channels = n;
  switch (desc->f) {
    case cudaChannelFormatKindUnsigned:
    case cudaChannelFormatKindSigned: {
      bool sign = desc->f == cudaChannelFormatKindSigned;
      switch (desc->x) {
        case 8: *format = sign ? CU_AD_FORMAT_SIGNED_INT8 : CU_AD_FORMAT_UNSIGNED_INT8; return cudaSuccess;
        case 16: *format = sign ? CU_AD_FORMAT_SIGNED_INT16 : CU_AD_FORMAT_UNSIGNED_INT16; return cudaSuccess;
        case 32: *format = sign ? CU_AD_FORMAT_SIGNED_INT32 : CU_AD_FORMAT_UNSIGNED_INT32; return cudaSuccess;
        default: return cudaErrorInvalidChannelDescriptor;
      }
    }
    case cudaChannelFormatKindFloat:
      if (desc->x == 16) *format = CU_AD_FORMAT_HALF;
      else if (desc->x == 32) *format = CU_AD_FORMAT_FLOAT;
      else return cudaErrorInvalidChannelDescriptor;
      return cudaSuccess;
    default:
      return cudaErrorInvalidChannelDescriptor;
  }
}

// cudaHostAlloc* flags have the values of CU_MEMHOSTALLOC_*; NVIDIA's runtime allocates pinned memory through
// cuMemHostAlloc only (it never asks for cuMemAllocHost).
cudaError_t host_alloc(void** pHost, size_t size, unsigned flags) {
  SIM_TRY(enter());
  if (pHost == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuMemHostAlloc, pHost, size, flags);
}

// cudaArray* flags have the values of CUDA_ARRAY3D_*; a 1D/2D array without flags is a cuArrayCreate.
cudaError_t create_array(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent, unsigned flags,
                         bool three_d) {
  SIM_TRY(enter());
  if (array == nullptr) return fail(cudaErrorInvalidValue);
  CUDA_ARRAY3D_DESCRIPTOR d{};
  SIM_TRY(check(array_format(desc, &d.Format, &d.NumChannels)));
  d.Width = extent.width;
  d.Height = extent.height;
  d.Depth = extent.depth;
  d.Flags = flags;
  CUarray handle = nullptr;
  cudaError_t e;
  if (!three_d && flags == 0) {
    CUDA_ARRAY_DESCRIPTOR d2{d.Width, d.Height, d.Format, d.NumChannels};
    e = SIM_CALL(cuArrayCreate_v2, &handle, &d2);
  } else {
    e = SIM_CALL(cuArray3DCreate_v2, &handle, &d);
  }
  if (e == cudaSuccess) *array = reinterpret_cast<cudaArray_t>(handle);
  return e;
}

}  // namespace

SIM_CUDART_API cudaError_t CUDARTAPI cudaMalloc(void** devPtr, size_t size) {
  SIM_TRY(enter());
  if (devPtr == nullptr) return fail(cudaErrorInvalidValue);
  if (size == 0) {
    *devPtr = nullptr;
    return cudaSuccess;
  }
  CUdeviceptr d = 0;
  return deliver(SIM_CALL(cuMemAlloc_v2, &d, size), devPtr, d);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaFree(void* devPtr) {
  SIM_TRY(enter());  // cudaFree(0) is the classic way to initialize the context
  if (devPtr == nullptr) return cudaSuccess;
  return SIM_CALL(cuMemFree_v2, dptr(devPtr));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
  SIM_TRY(enter());
  if (devPtr == nullptr || pitch == nullptr) return fail(cudaErrorInvalidValue);
  CUdeviceptr d = 0;
  return deliver(SIM_CALL(cuMemAllocPitch_v2, &d, pitch, width, height, 4u), devPtr, d);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMalloc3D(cudaPitchedPtr* pitchedDevPtr, cudaExtent extent) {
  SIM_TRY(enter());
  if (pitchedDevPtr == nullptr) return fail(cudaErrorInvalidValue);
  CUdeviceptr d = 0;
  size_t pitch = 0;
  SIM_TRY(SIM_CALL(cuMemAllocPitch_v2, &d, &pitch, extent.width, extent.height * extent.depth, 4u));
  *pitchedDevPtr = cudaPitchedPtr{reinterpret_cast<void*>(d), pitch, extent.width, extent.height};
  return cudaSuccess;
}

// cudaMemAttachGlobal/Host have the values of CU_MEM_ATTACH_GLOBAL/HOST.
SIM_CUDART_API cudaError_t CUDARTAPI cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  SIM_TRY(enter());
  if (devPtr == nullptr) return fail(cudaErrorInvalidValue);
  CUdeviceptr d = 0;
  return deliver(SIM_CALL(cuMemAllocManaged, &d, size, flags), devPtr, d);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  return host_alloc(pHost, size, flags);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMallocHost(void** ptr, size_t size) {
  return host_alloc(ptr, size, cudaHostAllocDefault);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaFreeHost(void* ptr) {
  SIM_TRY(enter());
  if (ptr == nullptr) return cudaSuccess;
  return SIM_CALL(cuMemFreeHost, ptr);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  return malloc_async<R_cuMemAllocAsync>(devPtr, size, hStream);
}
SIM_CUDART_API cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
  return malloc_async<R_cuMemAllocAsync_ptsz>(devPtr, size, hStream);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  return free_async<R_cuMemFreeAsync>(devPtr, hStream);
}
SIM_CUDART_API cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
  return free_async<R_cuMemFreeAsync_ptsz>(devPtr, hStream);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool,
                                                              cudaStream_t stream) {
  return malloc_from_pool_async<R_cuMemAllocFromPoolAsync>(ptr, size, memPool, stream);
}
SIM_CUDART_API cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool,
                                                                   cudaStream_t stream) {
  return malloc_from_pool_async<R_cuMemAllocFromPoolAsync_ptsz>(ptr, size, memPool, stream);
}

SIM_CUDART_API cudaChannelFormatDesc CUDARTAPI cudaCreateChannelDesc(int x, int y, int z, int w,
                                                                     cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc,
                                                      size_t width, size_t height, unsigned int flags) {
  return create_array(array, desc, cudaExtent{width, height, 0}, flags, false);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc,
                                                        cudaExtent extent, unsigned int flags) {
  return create_array(array, desc, extent, flags, true);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaFreeArray(cudaArray_t array) {
  SIM_TRY(enter());
  if (array == nullptr) return cudaSuccess;
  return SIM_CALL(cuArrayDestroy, cu(array));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMemPoolCreate(cudaMemPool_t* memPool, const cudaMemPoolProps* poolProps) {
  SIM_TRY(enter());
  if (memPool == nullptr || poolProps == nullptr) return fail(cudaErrorInvalidValue);
  CUmemPoolProps props{};
  props.allocType = static_cast<CUmemAllocationType>(poolProps->allocType);
  props.handleTypes = static_cast<CUmemAllocationHandleType>(poolProps->handleTypes);
  props.location.type = static_cast<CUmemLocationType>(poolProps->location.type);
  props.location.id = poolProps->location.id;
  props.win32SecurityAttributes = poolProps->win32SecurityAttributes;
  props.maxSize = poolProps->maxSize;
  props.usage = poolProps->usage;
  return SIM_CALL(cuMemPoolCreate, memPool, &props);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMemPoolDestroy(cudaMemPool_t memPool) {
  SIM_TRY(enter());
  return SIM_CALL(cuMemPoolDestroy, memPool);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
  SIM_TRY(enter());
  return SIM_CALL(cuMemPoolTrimTo, memPool, minBytesToKeep);
}

// cudaMemPoolAttr has the values of CUmemPool_attribute.
SIM_CUDART_API cudaError_t CUDARTAPI cudaMemPoolSetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr,
                                                              void* value) {
  SIM_TRY(enter());
  return SIM_CALL(cuMemPoolSetAttribute, memPool, static_cast<CUmemPool_attribute>(attr), value);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMemPoolGetAttribute(cudaMemPool_t memPool, cudaMemPoolAttr attr,
                                                              void* value) {
  SIM_TRY(enter());
  return SIM_CALL(cuMemPoolGetAttribute, memPool, static_cast<CUmemPool_attribute>(attr), value);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMemGetInfo(size_t* free, size_t* total) {
  SIM_TRY(enter());
  return SIM_CALL(cuMemGetInfo_v2, free, total);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  SIM_TRY(enter());
  if (attributes == nullptr) return fail(cudaErrorInvalidValue);
  CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED};
  unsigned memory_type = 0;
  int ordinal = -2;
  CUdeviceptr device_pointer = 0;
  void* host_pointer = nullptr;
  unsigned managed = 0;  // a boolean; read through a zeroed word whatever width the driver writes
  void* data[] = {&memory_type, &ordinal, &device_pointer, &host_pointer, &managed};
  SIM_TRY(SIM_CALL(cuPointerGetAttributes, 5u, which, data, dptr(ptr)));
  cudaPointerAttributes a{};
  if (managed != 0) a.type = cudaMemoryTypeManaged;
  else if (memory_type == CU_MEMORYTYPE_HOST) a.type = cudaMemoryTypeHost;
  else if (memory_type == CU_MEMORYTYPE_DEVICE) a.type = cudaMemoryTypeDevice;
  else a.type = cudaMemoryTypeUnregistered;
  if (a.type == cudaMemoryTypeUnregistered) {
    a.device = -2;
  } else {
    a.device = ordinal;
    a.devicePointer = reinterpret_cast<void*>(device_pointer);
    a.hostPointer = host_pointer;
  }
  *attributes = a;
  return cudaSuccess;
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return memcpy_sync<R_cuMemcpy>(dst, src, count, kind);
}
SIM_CUDART_API cudaError_t CUDARTAPI cudaMemcpy_ptds(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return memcpy_sync<R_cuMemcpy_ptds>(dst, src, count, kind);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                                      cudaStream_t stream) {
  return memcpy_async<R_cuMemcpyAsync>(dst, src, count, kind, stream);
}
SIM_CUDART_API cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count,
                                                           cudaMemcpyKind kind, cudaStream_t stream) {
  return memcpy_async<R_cuMemcpyAsync_ptsz>(dst, src, count, kind, stream);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMemset(void* devPtr, int value, size_t count) {
  return memset_sync<R_cuMemsetD8_v2>(devPtr, value, count);
}
SIM_CUDART_API cudaError_t CUDARTAPI cudaMemset_ptds(void* devPtr, int value, size_t count) {
  return memset_sync<R_cuMemsetD8_v2_ptds>(devPtr, value, count);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return memset_async<R_cuMemsetD8Async>(devPtr, value, count, stream);
}
SIM_CUDART_API cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count,
                                                           cudaStream_t stream) {
  return memset_async<R_cuMemsetD8Async_ptsz>(devPtr, value, count, stream);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  SIM_TRY(enter());
  return SIM_CALL(cuMemHostRegister_v2, ptr, size, flags);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaHostUnregister(void* ptr) {
  SIM_TRY(enter());
  return SIM_CALL(cuMemHostUnregister, ptr);
}

// With unified addressing the driver tells host from device memory itself.
SIM_CUDART_API cudaError_t CUDARTAPI cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                                        size_t width, size_t height, cudaMemcpyKind kind,
                                                        cudaStream_t stream) {
  SIM_TRY(enter());
  if (!valid_kind(kind)) return fail(cudaErrorInvalidMemcpyDirection);
  if (width == 0 || height == 0) return cudaSuccess;
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.srcDevice = dptr(src);
  copy.srcPitch = spitch;
  copy.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.dstDevice = dptr(dst);
  copy.dstPitch = dpitch;
  copy.WidthInBytes = width;
  copy.Height = height;
  return SIM_CALL(cuMemcpy2DAsync_v2, &copy, cu(stream));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                                          size_t count, cudaStream_t stream) {
  SIM_TRY(enter());
  if (!valid_device(dstDevice) || !valid_device(srcDevice)) return fail(cudaErrorInvalidDevice);
  if (count == 0) return cudaSuccess;
  CUcontext dst_ctx = nullptr;
  CUcontext src_ctx = nullptr;
  SIM_TRY(primary_context(dstDevice, &dst_ctx));
  SIM_TRY(primary_context(srcDevice, &src_ctx));
  return SIM_CALL(cuMemcpyPeerAsync, dptr(dst), dst_ctx, dptr(src), src_ctx, count, cu(stream));
}

// cudaMemAccessDesc and CUmemAccessDesc have the same layout and values.
SIM_CUDART_API cudaError_t CUDARTAPI cudaMemPoolSetAccess(cudaMemPool_t memPool, const cudaMemAccessDesc* descList,
                                                           size_t count) {
  static_assert(sizeof(cudaMemAccessDesc) == sizeof(CUmemAccessDesc));
  SIM_TRY(enter());
  return SIM_CALL(cuMemPoolSetAccess, memPool, reinterpret_cast<const CUmemAccessDesc*>(descList), count);
}
