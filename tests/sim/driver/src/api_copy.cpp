// Copies and fills. Device memory is host memory at the same address, so a copy is a memmove once both ranges are
// known to be valid: a device range must lie inside one live CUDA allocation or adjacent VMM mappings
// (CUDA_ERROR_INVALID_VALUE otherwise); the unified cuMemcpy also accepts plain host memory. Async variants
// complete before returning.
#include <cstring>

#include "state.h"

using namespace gpumemtrace::sim;

namespace {

enum class Side { Host, Device, Unified };

bool range_ok(Side side, uintptr_t p, size_t n) {
  switch (side) {
    case Side::Host: return p != 0;
    case Side::Device: return device_range_ok(p, n);
    case Side::Unified: return unified_range_ok(p, n);
  }
  return false;
}

CUresult copy(Side dst_side, uintptr_t dst, Side src_side, uintptr_t src, size_t n) {
  SIM_REQUIRE_CTX(ctx);
  if (n == 0) return CUDA_SUCCESS;
  if (!range_ok(dst_side, dst, n) || !range_ok(src_side, src, n)) return CUDA_ERROR_INVALID_VALUE;
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}

CUresult copy_async(Side dst_side, uintptr_t dst, Side src_side, uintptr_t src, size_t n, CUstream hStream) {
  SIM_REQUIRE_INIT();
  if (CUresult r = check_stream(hStream); r != CUDA_SUCCESS) return r;
  return copy(dst_side, dst, src_side, src, n);
}

uintptr_t u(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// Fills `height` rows of `width` elements of `size` bytes, `pitch` bytes apart.
template <typename T>
CUresult fill(CUdeviceptr dst, size_t pitch, T value, size_t width, size_t height) {
  SIM_REQUIRE_CTX(ctx);
  if (dst % sizeof(T) != 0 || (height > 1 && pitch % sizeof(T) != 0)) return CUDA_ERROR_INVALID_VALUE;
  if (width == 0 || height == 0) return CUDA_SUCCESS;
  size_t row = width * sizeof(T);
  if (height > 1 && pitch < row) return CUDA_ERROR_INVALID_VALUE;
  if (!device_range_ok(dst, (height - 1) * pitch + row)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t y = 0; y < height; y++) {
    auto* p = reinterpret_cast<T*>(dst + y * pitch);
    if constexpr (sizeof(T) == 1) {
      std::memset(p, value, width);
    } else {
      for (size_t i = 0; i < width; i++) p[i] = value;
    }
  }
  return CUDA_SUCCESS;
}

template <typename T>
CUresult fill_async(CUdeviceptr dst, size_t pitch, T value, size_t width, size_t height, CUstream hStream) {
  SIM_REQUIRE_INIT();
  if (CUresult r = check_stream(hStream); r != CUDA_SUCCESS) return r;
  return fill<T>(dst, pitch, value, width, height);
}

// One side of a 2D/3D copy: its base address and pitches, from the memory type (arrays are dense rows).
struct Plane {
  Side side;
  uintptr_t base;
  size_t pitch;
  size_t height;  // rows per slice (3D)
};

bool plane(CUmemorytype type, const void* host, CUdeviceptr device, CUarray array, size_t x, size_t y, size_t z,
           size_t pitch, size_t height, Plane* out) {
  switch (type) {
    case CU_MEMORYTYPE_HOST: *out = {Side::Host, u(host), pitch, height}; break;
    case CU_MEMORYTYPE_DEVICE: *out = {Side::Device, device, pitch, height}; break;
    case CU_MEMORYTYPE_UNIFIED: *out = {Side::Unified, device, pitch, height}; break;
    case CU_MEMORYTYPE_ARRAY:
      if (!valid(array)) return false;
      *out = {Side::Device, array->base, array->desc.Width * array->element_size,
              std::max<size_t>(array->desc.Height, 1)};
      break;
    default: return false;
  }
  out->base += x + y * out->pitch + z * out->pitch * out->height;
  return true;
}

CUresult copy_3d(const Plane& dst, const Plane& src, size_t width, size_t height, size_t depth) {
  SIM_REQUIRE_CTX(ctx);
  if (width == 0 || height == 0 || depth == 0) return CUDA_SUCCESS;
  if ((height > 1 || depth > 1) && (dst.pitch < width || src.pitch < width)) return CUDA_ERROR_INVALID_VALUE;
  auto extent = [&](const Plane& p) { return (depth - 1) * p.pitch * p.height + (height - 1) * p.pitch + width; };
  if (!range_ok(dst.side, dst.base, extent(dst)) || !range_ok(src.side, src.base, extent(src)))
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t z = 0; z < depth; z++)
    for (size_t y = 0; y < height; y++)
      std::memmove(reinterpret_cast<void*>(dst.base + z * dst.pitch * dst.height + y * dst.pitch),
                   reinterpret_cast<const void*>(src.base + z * src.pitch * src.height + y * src.pitch), width);
  return CUDA_SUCCESS;
}

CUresult copy_2d(const CUDA_MEMCPY2D* p) {
  SIM_REQUIRE_INIT();
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  Plane dst, src;
  if (!plane(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, 0, p->dstPitch, 1,
             &dst) ||
      !plane(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, 0, p->srcPitch, 1,
             &src))
    return CUDA_ERROR_INVALID_VALUE;
  return copy_3d(dst, src, p->WidthInBytes, p->Height, 1);
}

CUresult copy_3d(const CUDA_MEMCPY3D* p) {
  SIM_REQUIRE_INIT();
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  Plane dst, src;
  if (!plane(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, p->dstZ, p->dstPitch,
             std::max<size_t>(p->dstHeight, p->Height), &dst) ||
      !plane(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, p->srcZ, p->srcPitch,
             std::max<size_t>(p->srcHeight, p->Height), &src))
    return CUDA_ERROR_INVALID_VALUE;
  return copy_3d(dst, src, p->WidthInBytes, p->Height, p->Depth);
}

template <typename Params>
CUresult copy_nd_async(const Params* p, CUstream hStream) {
  SIM_REQUIRE_INIT();
  if (CUresult r = check_stream(hStream); r != CUDA_SUCCESS) return r;
  if constexpr (std::is_same_v<Params, CUDA_MEMCPY2D>)
    return copy_2d(p);
  else
    return copy_3d(p);
}

CUresult copy_peer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n,
                   CUstream hStream, bool async) {
  SIM_REQUIRE_INIT();
  if (async)
    if (CUresult r = check_stream(hStream); r != CUDA_SUCCESS) return r;
  if (!valid(dst_ctx) || !valid(src_ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  return copy(Side::Device, dst, Side::Device, src, n);
}

// Between an array's bytes from `offset` and host memory, in the direction `to_array` says.
CUresult copy_array(CUarray array, size_t offset, uintptr_t host, size_t n, bool to_array) {
  SIM_REQUIRE_INIT();
  if (!valid(array) || offset > array->bytes || n > array->bytes - offset) return CUDA_ERROR_INVALID_VALUE;
  uintptr_t at = array->base + offset;
  return to_array ? copy(Side::Device, at, Side::Host, host, n) : copy(Side::Host, host, Side::Device, at, n);
}

}  // namespace

// ---- linear copies --------------------------------------------------------------------------------------------

SIM_WITH_PER_THREAD(cuMemcpy, _ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount),
                    copy(Side::Unified, dst, Side::Unified, src, ByteCount))
SIM_WITH_PER_THREAD(cuMemcpyAsync, _ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
                    copy_async(Side::Unified, dst, Side::Unified, src, ByteCount, hStream))
SIM_WITH_PER_THREAD(cuMemcpyPeer, _ptds,
                    (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                     size_t ByteCount),
                    copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, nullptr, false))
SIM_WITH_PER_THREAD(cuMemcpyPeerAsync, _ptsz,
                    (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                     size_t ByteCount, CUstream hStream),
                    copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, true))
SIM_WITH_PER_THREAD(cuMemcpyHtoD_v2, _ptds, (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount),
                    copy(Side::Device, dstDevice, Side::Host, u(srcHost), ByteCount))
SIM_WITH_PER_THREAD(cuMemcpyDtoH_v2, _ptds, (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount),
                    copy(Side::Host, u(dstHost), Side::Device, srcDevice, ByteCount))
SIM_WITH_PER_THREAD(cuMemcpyDtoD_v2, _ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
                    copy(Side::Device, dstDevice, Side::Device, srcDevice, ByteCount))
SIM_WITH_PER_THREAD(cuMemcpyHtoDAsync_v2, _ptsz,
                    (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, CUstream hStream),
                    copy_async(Side::Device, dstDevice, Side::Host, u(srcHost), ByteCount, hStream))
SIM_WITH_PER_THREAD(cuMemcpyDtoHAsync_v2, _ptsz,
                    (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
                    copy_async(Side::Host, u(dstHost), Side::Device, srcDevice, ByteCount, hStream))
SIM_WITH_PER_THREAD(cuMemcpyDtoDAsync_v2, _ptsz,
                    (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
                    copy_async(Side::Device, dstDevice, Side::Device, srcDevice, ByteCount, hStream))

// ---- arrays ---------------------------------------------------------------------------------------------------

SIM_WITH_PER_THREAD(cuMemcpyHtoA_v2, _ptds, (CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount),
                    copy_array(dstArray, dstOffset, u(srcHost), ByteCount, true))
SIM_WITH_PER_THREAD(cuMemcpyAtoH_v2, _ptds, (void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount),
                    copy_array(srcArray, srcOffset, u(dstHost), ByteCount, false))

// ---- 2D and 3D ------------------------------------------------------------------------------------------------

SIM_WITH_PER_THREAD(cuMemcpy2D_v2, _ptds, (const CUDA_MEMCPY2D* pCopy), copy_2d(pCopy))
SIM_WITH_PER_THREAD(cuMemcpy2DUnaligned_v2, _ptds, (const CUDA_MEMCPY2D* pCopy), copy_2d(pCopy))
SIM_WITH_PER_THREAD(cuMemcpy2DAsync_v2, _ptsz, (const CUDA_MEMCPY2D* pCopy, CUstream hStream),
                    copy_nd_async(pCopy, hStream))
SIM_WITH_PER_THREAD(cuMemcpy3D_v2, _ptds, (const CUDA_MEMCPY3D* pCopy), copy_3d(pCopy))
SIM_WITH_PER_THREAD(cuMemcpy3DAsync_v2, _ptsz, (const CUDA_MEMCPY3D* pCopy, CUstream hStream),
                    copy_nd_async(pCopy, hStream))

// ---- fills ----------------------------------------------------------------------------------------------------

SIM_WITH_PER_THREAD(cuMemsetD8_v2, _ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N),
                    fill(dstDevice, 0, uc, N, 1))
SIM_WITH_PER_THREAD(cuMemsetD16_v2, _ptds, (CUdeviceptr dstDevice, unsigned short us, size_t N),
                    fill(dstDevice, 0, us, N, 1))
SIM_WITH_PER_THREAD(cuMemsetD32_v2, _ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N),
                    fill(dstDevice, 0, ui, N, 1))
SIM_WITH_PER_THREAD(cuMemsetD8Async, _ptsz, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream),
                    fill_async(dstDevice, 0, uc, N, 1, hStream))
SIM_WITH_PER_THREAD(cuMemsetD16Async, _ptsz, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream),
                    fill_async(dstDevice, 0, us, N, 1, hStream))
SIM_WITH_PER_THREAD(cuMemsetD32Async, _ptsz, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream),
                    fill_async(dstDevice, 0, ui, N, 1, hStream))
// A stream memory operation: the 32-bit write is a one-element fill in stream order (flags only order it).
SIM_WITH_PER_THREAD(cuStreamWriteValue32, _ptsz, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int),
                    fill_async<cuuint32_t>(addr, 0, value, 1, 1, stream))
SIM_WITH_PER_THREAD(cuStreamWriteValue32_v2, _ptsz,
                    (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int),
                    fill_async<cuuint32_t>(addr, 0, value, 1, 1, stream))
SIM_WITH_PER_THREAD(cuMemsetD2D8_v2, _ptds,
                    (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height),
                    fill(dstDevice, dstPitch, uc, Width, Height))
SIM_WITH_PER_THREAD(cuMemsetD2D16_v2, _ptds,
                    (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height),
                    fill(dstDevice, dstPitch, us, Width, Height))
SIM_WITH_PER_THREAD(cuMemsetD2D32_v2, _ptds,
                    (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height),
                    fill(dstDevice, dstPitch, ui, Width, Height))
SIM_WITH_PER_THREAD(cuMemsetD2D8Async, _ptsz,
                    (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height,
                     CUstream hStream),
                    fill_async(dstDevice, dstPitch, uc, Width, Height, hStream))
SIM_WITH_PER_THREAD(cuMemsetD2D16Async, _ptsz,
                    (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height,
                     CUstream hStream),
                    fill_async(dstDevice, dstPitch, us, Width, Height, hStream))
SIM_WITH_PER_THREAD(cuMemsetD2D32Async, _ptsz,
                    (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height,
                     CUstream hStream),
                    fill_async(dstDevice, dstPitch, ui, Width, Height, hStream))
