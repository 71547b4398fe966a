#include "interpose/cupti/cupti_backend.h"

#include <cuda.h>
#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "interpose/cupti/activity_translator.h"
#include "interpose/cupti/cupti_library.h"
#include "interpose/cupti/memory_callbacks.h"
#include "interpose/base/config.h"
#include "interpose/base/debug_log.h"
#include "interpose/recording/recorder.h"
#include "trace/writer/trace_writer.h"

namespace gpumemtrace::interpose::cupti {

namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL};

struct Backend {
  CuptiLibrary library;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::atomic<bool> active{false};
  std::mutex mutex;  // the translator, and the order in which its batches are written
  ActivityTranslator translator;
};

Backend& backend() {
  static Backend* instance = new Backend();  // never destroyed: CUPTI may call back during exit
  return *instance;
}

void write_locked(const std::vector<TranslatedEvent>& events) {
  for (const TranslatedEvent& event : events)
    std::visit([&](const auto& record) { record_from(format::CaptureSource::Cupti, event.origin, record); },
               event.record);
}

// CUPTI calls this on the calling thread when a subscribed driver API returns.
void CUPTIAPI on_api_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || !data) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite != CUPTI_API_EXIT) return;
  const MemoryCallback* callback = find_memory_callback(cbid);
  const auto* result = static_cast<const CUresult*>(info->functionReturnValue);
  if (!callback || !result || *result != CUDA_SUCCESS) return;
  const HookState& hooks = hook_state();
  ApiCall call{info->correlationId, callback->api, {}, hooks.driver_wrapper_depth > 0 || hooks.runtime_depth > 0};
  if (!call.interposed) call.origin = capture_call_origin();  // a dropped record needs no stack
  Backend& b = backend();
  std::lock_guard lock(b.mutex);
  b.translator.on_call(call);
}

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  Backend& b = backend();
  std::vector<TranslatedEvent> events;
  {
    std::lock_guard lock(b.mutex);
    CUpti_Activity* record = nullptr;
    while (b.library.ActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS)
      b.translator.on_activity(record);
    b.translator.emit_ready(events);
    write_locked(events);
  }
  std::free(buffer);
}

// CUPTI's timestamps in the trace's clock (CLOCK_MONOTONIC).
uint64_t CUPTIAPI trace_clock() { return writer::monotonic_ns(); }

std::string not_used(const std::string& why, StartedBy how) {
  return "CUPTI is not used: " + why +
         (how == StartedBy::Environment ? "; tracing goes on with interposition only"
                                        : "; nothing is recorded through CUDA_INJECTION64_PATH");
}

bool subscribe(Backend& b, StartedBy how) {
  CuptiLibrary& cupti = b.library;
  CUptiResult rc = cupti.Subscribe(&b.subscriber, on_api_callback, nullptr);
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    warn("%s", not_used("another tool holds CUPTI (Nsight Systems, Nsight Compute, torch.profiler, ...): "
                        "cuptiSubscribe returned " + cupti.describe(rc), how).c_str());
    return false;
  }
  if (rc != CUPTI_SUCCESS) {
    warn("%s", not_used("cuptiSubscribe returned " + cupti.describe(rc) + " (is there a CUDA driver and a GPU?)", how)
                   .c_str());
    return false;
  }
  for (const MemoryCallback& callback : memory_callbacks()) {
    rc = cupti.EnableCallback(1, b.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, callback.id);
    if (rc != CUPTI_SUCCESS) {
      warn("%s", not_used("cuptiEnableCallback returned " + cupti.describe(rc), how).c_str());
      cupti.Unsubscribe(b.subscriber);
      return false;
    }
  }
  return true;
}

bool enable_activity(Backend& b, StartedBy how) {
  CuptiLibrary& cupti = b.library;
  if (cupti.ActivityRegisterTimestampCallback && cupti.ActivityRegisterTimestampCallback(trace_clock) != CUPTI_SUCCESS)
    debug_log("CUPTI: cuptiActivityRegisterTimestampCallback refused; activity times are when it is written");
  CUptiResult rc = cupti.ActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
  for (size_t i = 0; rc == CUPTI_SUCCESS && i < std::size(kKinds); ++i) {
    rc = cupti.ActivityEnable(kKinds[i]);
    if (rc != CUPTI_SUCCESS) {
      for (size_t j = 0; j < i; ++j) cupti.ActivityDisable(kKinds[j]);
      warn("%s", not_used("cuptiActivityEnable returned " + cupti.describe(rc), how).c_str());
      cupti.Unsubscribe(b.subscriber);
      return false;
    }
  }
  if (rc != CUPTI_SUCCESS) {
    warn("%s", not_used("cuptiActivityRegisterCallbacks returned " + cupti.describe(rc), how).c_str());
    cupti.Unsubscribe(b.subscriber);
    return false;
  }
  return true;
}

void flush_at_exit() { flush(); }

bool start_now(StartedBy how) {
  BusyGuard busy;  // whatever CUPTI does while it starts is not the program's
  Backend& b = backend();
  const Config& config = tracer_config();
  std::string error;
  std::vector<std::string> candidates = cupti_candidates(config.cupti_path, std::getenv("CUDA_HOME"));
  if (!load_cupti(candidates, b.library, error)) {
    debug_log("CUPTI: %s", error.c_str());
    std::string why = config.cupti_path.empty()
                          ? "libcupti.so.13 was not found (set GPUMEMTRACE_CUPTI_PATH or CUDA_HOME)"
                          : "cannot load GPUMEMTRACE_CUPTI_PATH=" + config.cupti_path + " (" + error + ")";
    warn("%s", not_used(why, how).c_str());
    return false;
  }
  debug_log("CUPTI: loaded %s", b.library.path.c_str());
  if (!subscribe(b, how) || !enable_activity(b, how)) return false;
  b.active = true;
  std::atexit(flush_at_exit);
  // A forked child starts a trace of its own: what CUPTI held belongs to the parent's.
  pthread_atfork([] { flush(); backend().mutex.lock(); }, [] { backend().mutex.unlock(); },
                 [] {
                   Backend& child = backend();
                   child.translator = ActivityTranslator();
                   child.mutex.unlock();
                 });
  debug_log("CUPTI: memory and memory-pool activity enabled (%s)",
            how == StartedBy::Environment ? "GPUMEMTRACE_CUPTI" : "CUDA_INJECTION64_PATH");
  return true;
}

}  // namespace

bool start(StartedBy how) {
  static std::atomic<bool> started{false};
  if (started.exchange(true)) return active();
  return start_now(how);
}

void prepare() { backend(); }

bool active() { return backend().active.load(std::memory_order_relaxed); }

void flush() {
  Backend& b = backend();
  if (!active()) return;
  b.library.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::vector<TranslatedEvent> events;
  std::lock_guard lock(b.mutex);
  b.translator.emit_all(events);
  write_locked(events);
}

}  // namespace gpumemtrace::interpose::cupti

// CUDA_INJECTION64_PATH=libgpumemtrace.so: the driver loads the library at cuInit and calls this.
extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  gpumemtrace::interpose::cupti::start(gpumemtrace::interpose::cupti::StartedBy::Injection);
  return 1;
}
