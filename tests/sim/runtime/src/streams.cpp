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

SIM_CUDART_API cudaError_t CUDARTAPI cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                                               unsigned int flags) {
  SIM_TRY(enter());
  return SIM_CALL(cuEventRecordWithFlags, cu(event), cu(stream), flags);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  SIM_TRY(enter());
  return SIM_CALL(cuStreamWaitEvent, cu(stream), cu(event), flags);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  SIM_TRY(enter());
  if (priority == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuStreamGetPriority, cu(hStream), priority);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  SIM_TRY(enter());
  if (fn == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuLaunchHostFunc, cu(stream), fn, userData);
}

namespace {

// A runtime stream callback behind the driver's: the status it gets is the runtime's error.
struct StreamCallback {
  cudaStreamCallback_t callback;
  void* user_data;
};

void CUDA_CB run_stream_callback(CUstream stream, CUresult status, void* data) {
  auto* c = static_cast<StreamCallback*>(data);
  c->callback(reinterpret_cast<cudaStream_t>(stream), to_runtime_error(status), c->user_data);
  delete c;
}

}  // namespace

SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                                            void* userData, unsigned int flags) {
  SIM_TRY(enter());
  if (callback == nullptr) return fail(cudaErrorInvalidValue);
  auto* c = new StreamCallback{callback, userData};
  cudaError_t e = SIM_CALL(cuStreamAddCallback, cu(stream), run_stream_callback, c, flags);
  if (e != cudaSuccess) delete c;
  return e;
}

// Stream capture: the simulated driver never captures (cudaStreamBeginCapture is not supported), so these report
// what the driver says, which is "not capturing".
SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamIsCapturing(cudaStream_t stream,
                                                            cudaStreamCaptureStatus* pCaptureStatus) {
  SIM_TRY(enter());
  if (pCaptureStatus == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuStreamIsCapturing, cu(stream), reinterpret_cast<CUstreamCaptureStatus*>(pCaptureStatus));
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaStreamGetCaptureInfo(cudaStream_t stream,
                                                               cudaStreamCaptureStatus* captureStatus_out,
                                                               unsigned long long* id_out, cudaGraph_t* graph_out,
                                                               const cudaGraphNode_t** dependencies_out,
                                                               const cudaGraphEdgeData** edgeData_out,
                                                               size_t* numDependencies_out) {
  SIM_TRY(enter());
  if (captureStatus_out == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuStreamGetCaptureInfo_v3, cu(stream), reinterpret_cast<CUstreamCaptureStatus*>(captureStatus_out),
                  reinterpret_cast<cuuint64_t*>(id_out), graph_out, dependencies_out, reinterpret_cast<const CUgraphEdgeData**>(edgeData_out),
                  numDependencies_out);
}

SIM_CUDART_API cudaError_t CUDARTAPI cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  SIM_TRY(enter_driver());
  if (mode == nullptr) return fail(cudaErrorInvalidValue);
  return SIM_CALL(cuThreadExchangeStreamCaptureMode, reinterpret_cast<CUstreamCaptureMode*>(mode));
}
