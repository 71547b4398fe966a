// NVIDIA's libcupti.so.13, loaded at run time (the tracer never links it): where it is looked for, and the
// few functions the backend calls.
#pragma once

#include <cupti.h>

#include <string>
#include <vector>

namespace gpumemtrace::interpose::cupti {

// Where libcupti.so.13 is looked for, in order: GPUMEMTRACE_CUPTI_PATH alone when set (`explicit_path`);
// else $CUDA_HOME/lib64 and $CUDA_HOME/extras/CUPTI/lib64, the loader's own search (LD_LIBRARY_PATH,
// ld.so.cache), then the CUDA installation this library was built against and /usr/local/cuda.
std::vector<std::string> cupti_candidates(const std::string& explicit_path, const char* cuda_home);

struct CuptiLibrary {
  void* handle = nullptr;
  std::string path;  // the candidate that loaded
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle) = nullptr;
  CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) = nullptr;
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc) = nullptr;  // optional
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;

  // "CUPTI_ERROR_UNKNOWN (999)"
  std::string describe(CUptiResult result) const;
};

// Loads the first candidate that has every required function. On failure, `error` says what was tried.
bool load_cupti(const std::vector<std::string>& candidates, CuptiLibrary& library, std::string& error);

}  // namespace gpumemtrace::interpose::cupti
