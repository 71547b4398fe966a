// Streams, events and error strings. All work completes when it is issued: queries report done, waits return at
// once, callbacks run on the calling thread. Synchronization points let pools release memory above their
// release threshold.
#include <chrono>
#include <cstring>
#include <utility>

#include "error_table.inc"
#include "state.h"

using namespace gpumemtrace::sim;

namespace {

HandleCache<CUstream_st>& stream_cache() {
  static auto* cache = new HandleCache<CUstream_st>;
  return *cache;
}
HandleCache<CUevent_st>& event_cache() {
  static auto* cache = new HandleCache<CUevent_st>;
  return *cache;
}

template <typename T>
CUresult destroy(HandleCache<T>& cache, T* handle) {
  SIM_REQUIRE_INIT();
  if (!valid(handle)) return CUDA_ERROR_INVALID_HANDLE;
  cache.put(handle);
  return CUDA_SUCCESS;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Resolves a stream handle to its context (declares `ctx`), or returns the error.
#define SIM_STREAM_CTX(ctx, stream)               \
  SIM_REQUIRE_INIT();                             \
  CUresult ctx##_err = CUDA_SUCCESS;              \
  CUctx_st* ctx = stream_ctx(stream, &ctx##_err); \
  if (!ctx) return ctx##_err

CUresult stream_create(CUstream* phStream, unsigned int flags, int priority) {
  SIM_REQUIRE_CTX(ctx);
  if (!phStream || (flags & ~CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* s = stream_cache().get();
  s->ctx = ctx;
  s->flags = flags;
  s->priority = std::max(-5, std::min(0, priority));  // clamped to the device's range, as the driver does
  s->id = next_id();
  *phStream = s;
  return CUDA_SUCCESS;
}

CUresult stream_synchronize(CUstream hStream) {
  SIM_STREAM_CTX(ctx, hStream);
  release_pools_to_threshold(*ctx->dev);
  return CUDA_SUCCESS;
}

CUresult stream_wait_event(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  SIM_STREAM_CTX(ctx, hStream);
  if (!valid(hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  (void)Flags;
  return CUDA_SUCCESS;
}

CUresult stream_add_callback(CUstream hStream, CUstreamCallback callback, void* userData, unsigned int flags) {
  SIM_STREAM_CTX(ctx, hStream);
  if (!callback || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  callback(hStream, CUDA_SUCCESS, userData);
  return CUDA_SUCCESS;
}

CUresult launch_host_func(CUstream hStream, CUhostFn fn, void* userData) {
  SIM_STREAM_CTX(ctx, hStream);
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  fn(userData);
  return CUDA_SUCCESS;
}

CUresult stream_accepts(CUstream hStream) {
  SIM_STREAM_CTX(ctx, hStream);
  return CUDA_SUCCESS;
}

// Answers a query about a stream: value(stream, its context) into *out.
template <typename T, typename F>
CUresult stream_get(CUstream hStream, T* out, F value) {
  SIM_STREAM_CTX(ctx, hStream);
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  *out = value(hStream, ctx);
  return CUDA_SUCCESS;
}

CUresult event_record(CUevent hEvent, CUstream hStream) {
  SIM_STREAM_CTX(ctx, hStream);
  if (!valid(hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  hEvent->time_ns.store(now_ns(), std::memory_order_relaxed);
  hEvent->recorded.store(true, std::memory_order_release);
  return CUDA_SUCCESS;
}

CUresult elapsed_time(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  SIM_REQUIRE_INIT();
  if (!pMilliseconds) return CUDA_ERROR_INVALID_VALUE;
  if (!valid(hStart) || !valid(hEnd)) return CUDA_ERROR_INVALID_HANDLE;
  if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
  if (!hStart->recorded.load(std::memory_order_acquire) || !hEnd->recorded.load(std::memory_order_acquire))
    return CUDA_ERROR_INVALID_HANDLE;
  *pMilliseconds = static_cast<float>(hEnd->time_ns.load() - hStart->time_ns.load()) / 1e6f;
  return CUDA_SUCCESS;
}

}  // namespace

// ---- streams --------------------------------------------------------------------------------------------------

CUAPI cuStreamCreate(CUstream* phStream, unsigned int Flags) { return stream_create(phStream, Flags, 0); }
CUAPI cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  return stream_create(phStream, flags, priority);
}

CUAPI cuStreamDestroy_v2(CUstream hStream) { return destroy(stream_cache(), hStream); }
CUAPI cuStreamDestroy(CUstream hStream) { return cuStreamDestroy_v2(hStream); }

SIM_WITH_PER_THREAD(cuStreamSynchronize, _ptsz, (CUstream hStream), stream_synchronize(hStream))
SIM_WITH_PER_THREAD(cuStreamQuery, _ptsz, (CUstream hStream), stream_accepts(hStream))
SIM_WITH_PER_THREAD(cuStreamWaitEvent, _ptsz, (CUstream hStream, CUevent hEvent, unsigned int Flags),
                    stream_wait_event(hStream, hEvent, Flags))
SIM_WITH_PER_THREAD(cuStreamAddCallback, _ptsz,
                    (CUstream hStream, CUstreamCallback callback, void* userData, unsigned int flags),
                    stream_add_callback(hStream, callback, userData, flags))
SIM_WITH_PER_THREAD(cuLaunchHostFunc, _ptsz, (CUstream hStream, CUhostFn fn, void* userData),
                    launch_host_func(hStream, fn, userData))
SIM_WITH_PER_THREAD(cuStreamGetFlags, _ptsz, (CUstream hStream, unsigned int* flags),
                    stream_get(hStream, flags, [](CUstream s, CUctx_st*) { return valid(s) ? s->flags : 0u; }))
SIM_WITH_PER_THREAD(cuStreamGetPriority, _ptsz, (CUstream hStream, int* priority),
                    stream_get(hStream, priority, [](CUstream s, CUctx_st*) { return valid(s) ? s->priority : 0; }))
SIM_WITH_PER_THREAD(cuStreamGetCtx, _ptsz, (CUstream hStream, CUcontext* pctx),
                    stream_get(hStream, pctx, [](CUstream, CUctx_st* ctx) { return ctx; }))
// The legacy default stream is 0, the per-thread default stream 1 (what NVIDIA's driver reports).
SIM_WITH_PER_THREAD(cuStreamGetId, _ptsz, (CUstream hStream, unsigned long long* streamId),
                    stream_get(hStream, streamId, [](CUstream s, CUctx_st*) {
                      return valid(s) ? s->id + 2 : s == CU_STREAM_PER_THREAD ? 1ull : 0ull;
                    }))
SIM_WITH_PER_THREAD(cuStreamGetDevice, _ptsz, (CUstream hStream, CUdevice* device),
                    stream_get(hStream, device, [](CUstream, CUctx_st* ctx) { return ctx->dev->ordinal; }))

// ---- events ---------------------------------------------------------------------------------------------------

CUAPI cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  SIM_REQUIRE_CTX(ctx);
  if (!phEvent || (Flags & ~(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)))
    return CUDA_ERROR_INVALID_VALUE;
  CUevent_st* e = event_cache().get();
  e->ctx = ctx;
  e->flags = Flags;
  *phEvent = e;
  return CUDA_SUCCESS;
}

CUAPI cuEventDestroy_v2(CUevent hEvent) { return destroy(event_cache(), hEvent); }
CUAPI cuEventDestroy(CUevent hEvent) { return cuEventDestroy_v2(hEvent); }

SIM_WITH_PER_THREAD(cuEventRecord, _ptsz, (CUevent hEvent, CUstream hStream), event_record(hEvent, hStream))
SIM_WITH_PER_THREAD(cuEventRecordWithFlags, _ptsz, (CUevent hEvent, CUstream hStream, unsigned int),
                    event_record(hEvent, hStream))

CUAPI cuEventQuery(CUevent hEvent) {
  SIM_REQUIRE_INIT();
  return valid(hEvent) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUAPI cuEventSynchronize(CUevent hEvent) {
  SIM_REQUIRE_INIT();
  if (!valid(hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  release_pools_to_threshold(*hEvent->ctx->dev);
  return CUDA_SUCCESS;
}

CUAPI cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return elapsed_time(pMilliseconds, hStart, hEnd);
}
CUAPI cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return elapsed_time(pMilliseconds, hStart, hEnd);
}

// ---- errors ---------------------------------------------------------------------------------------------------

namespace {

struct ErrorText {
  CUresult code;
  const char* text;
};

// NVIDIA's wording for the codes programs meet most; the others read as their enumerator, spelled out.
constexpr ErrorText kErrorTexts[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "device not ready"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

#define SIM_ERROR_NAME(name, value) {name, #name},
constexpr ErrorText kErrorNames[] = {SIM_ERROR_ENTRIES(SIM_ERROR_NAME)};
#undef SIM_ERROR_NAME

const char* error_name(CUresult error) {
  for (const ErrorText& e : kErrorNames)
    if (e.code == error) return e.text;
  return nullptr;
}

// "CUDA_ERROR_ILLEGAL_ADDRESS" -> "illegal address", built once per code into static storage.
const char* spelled_out(CUresult error, const char* name) {
  constexpr size_t kCodes = sizeof kErrorNames / sizeof kErrorNames[0];
  static char texts[kCodes][64];
  static std::once_flag once;
  std::call_once(once, [] {
    for (size_t i = 0; i < kCodes; i++) {
      const char* n = kErrorNames[i].text;
      if (std::strncmp(n, "CUDA_ERROR_", 11) == 0) n += 11;
      size_t j = 0;
      for (; n[j] && j + 1 < sizeof texts[i]; j++) texts[i][j] = n[j] == '_' ? ' ' : static_cast<char>(n[j] | 0x20);
      texts[i][j] = 0;
    }
  });
  for (size_t i = 0; i < kCodes; i++)
    if (kErrorNames[i].code == error) return texts[i];
  return name;
}

}  // namespace

CUAPI cuGetErrorName(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = error_name(error);
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUAPI cuGetErrorString(CUresult error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const char* name = error_name(error);
  if (!name) {
    *pStr = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (const ErrorText& e : kErrorTexts)
    if (e.code == error) {
      *pStr = e.text;
      return CUDA_SUCCESS;
    }
  *pStr = spelled_out(error, name);
  return CUDA_SUCCESS;
}

// ---- stream capture and attributes (nothing is ever captured) -------------------------------------------------

namespace {

thread_local CUstreamCaptureMode tls_capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

CUresult is_capturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  SIM_STREAM_CTX(ctx, hStream);
  if (!captureStatus) return CUDA_ERROR_INVALID_VALUE;
  *captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

// The cuStreamGetCaptureInfo versions differ in trailing out-parameters, all of which stay untouched when the
// stream is not capturing, as the real driver documents.
CUresult capture_info(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out) {
  CUresult r = is_capturing(hStream, captureStatus_out);
  if (r == CUDA_SUCCESS && id_out) *id_out = 0;
  return r;
}

CUresult stream_attribute(CUstream hStream, CUstreamAttrValue* value_out) {
  SIM_STREAM_CTX(ctx, hStream);
  if (value_out) *value_out = CUstreamAttrValue{};
  return CUDA_SUCCESS;
}


}  // namespace

SIM_WITH_PER_THREAD(cuStreamIsCapturing, _ptsz, (CUstream hStream, CUstreamCaptureStatus* captureStatus),
                    is_capturing(hStream, captureStatus))
SIM_WITH_PER_THREAD(cuStreamGetCaptureInfo, _ptsz,
                    (CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out),
                    capture_info(hStream, captureStatus_out, id_out))
SIM_WITH_PER_THREAD(cuStreamGetCaptureInfo_v2, _ptsz,
                    (CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out, CUgraph*,
                     const CUgraphNode**, size_t*),
                    capture_info(hStream, captureStatus_out, id_out))
SIM_WITH_PER_THREAD(cuStreamGetCaptureInfo_v3, _ptsz,
                    (CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out, CUgraph*,
                     const CUgraphNode**, const CUgraphEdgeData**, size_t*),
                    capture_info(hStream, captureStatus_out, id_out))

CUAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  if (!mode) return CUDA_ERROR_INVALID_VALUE;
  std::swap(*mode, tls_capture_mode);
  return CUDA_SUCCESS;
}

SIM_WITH_PER_THREAD(cuStreamGetAttribute, _ptsz, (CUstream hStream, CUstreamAttrID, CUstreamAttrValue* value_out),
                    stream_attribute(hStream, value_out))
SIM_WITH_PER_THREAD(cuStreamSetAttribute, _ptsz, (CUstream hStream, CUstreamAttrID, const CUstreamAttrValue*),
                    stream_accepts(hStream))
SIM_WITH_PER_THREAD(cuStreamCopyAttributes, _ptsz, (CUstream dst, CUstream src),
                    stream_accepts(src) != CUDA_SUCCESS ? stream_accepts(src) : stream_accepts(dst))
SIM_WITH_PER_THREAD(cuStreamAttachMemAsync, _ptsz, (CUstream hStream, CUdeviceptr, size_t, unsigned int),
                    stream_accepts(hStream))

// ---- profiler control: nothing to start or stop ---------------------------------------------------------------

CUAPI cuProfilerInitialize(const char*, const char*, CUoutput_mode) { return CUDA_SUCCESS; }
CUAPI cuProfilerStart(void) { return CUDA_SUCCESS; }
CUAPI cuProfilerStop(void) { return CUDA_SUCCESS; }
