// Streams and events. cudaStream*/cudaEvent* flags have the values of CU_STREAM_* / CU_EVENT_*.
#include "runtime.h"

using namespace sim_cudart;

namespace {

template <Row kRow>
cudaError_t stream_synchronize(cudaStream_t stream) {
  SIM_TRY(enter());
  return call_driver(reinterpret_cast<pfn::R_cuStreamSynchronize>(g_fn[kRow]), cu(stream));
}

// A stream or event query: cudaErrorNotReady is an answer, not an error, so it does not become the last error.
template <class Fn, class Handle>
cudaError_t query(Fn fn, Handle handle) {
  SIM_TRY(enter());
  if (fn == nullptr) return fail(cudaErrorNotSupported);
  CUresult r = fn(handle);
  return r == CUDA_ERROR_NOT_READY ? cudaErrorNotReady : check(to_runtime_error(r));
}

template <Row kRow>
cudaError_t stream_query(cudaStream_t stream) {
  return query(reinterpret_cast<pfn::R_cuStreamQuery>(g_fn[kRow]), cu(stream));
}

cudaError_t stream_create(cudaStream_t* pStream, unsigned flags) {
  SIM_TRY(enter());
  if (pStream == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuStreamCreate, reinterpret_cast<CUstream*>(pStream), flags);
}

cudaError_t event_create(cudaEvent_t* event, unsigned flags) {
  SIM_TRY(enter());
  if (event == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuEventCreate, reinterpret_cast<CUevent*>(event), flags);
}

template <Row kRow>
cudaError_t event_record(cudaEvent_t event, cudaStream_t stream) {
  SIM_TRY(enter());
  return call_driver(reinterpret_cast<pfn::R_cuEventRecord>(g_fn[kRow]), cu(event), cu(stream));
}

}  // namespace

SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t* pStream) {
  return stream_create(pStream, cudaStreamDefault);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  return stream_create(pStream, flags);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags,
                                                                   int priority) {
  SIM_TRY(enter());
  if (pStream == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuStreamCreateWithPriority, reinterpret_cast<CUstream*>(pStream), flags, priority);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream) {
  SIM_TRY(enter());
  return SIM_CALL(cuStreamDestroy_v2, cu(stream));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream) {
  return stream_synchronize<R_cuStreamSynchronize>(stream);
}
SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return stream_synchronize<R_cuStreamSynchronize_ptsz>(stream);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream) {
  return stream_query<R_cuStreamQuery>(stream);
}
SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t stream) {
  return stream_query<R_cuStreamQuery_ptsz>(stream);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t* event) {
  return event_create(event, cudaEventDefault);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  return event_create(event, flags);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return event_record<R_cuEventRecord>(event, stream);
}
SIM_CUDART_API cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return event_record<R_cuEventRecord_ptsz>(event, stream);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event) {
  return query(SIM_DRV(cuEventQuery), cu(event));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event) {
  SIM_TRY(enter());
  return SIM_CALL(cuEventSynchronize, cu(event));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  SIM_TRY(enter());
  if (ms == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuEventElapsedTime_v2, ms, cu(start), cu(end));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event) {
  SIM_TRY(enter());
  return SIM_CALL(cuEventDestroy_v2, cu(event));
}
