// The exported dlsym. CUDA runtimes (static and shared), cuBLAS, NCCL and friends reach the driver with
// dlopen("libcuda.so.1") + dlsym(handle, "cuGetProcAddress_v2"); handing out our wrapper there is what
// makes every later driver lookup visible (docs/cuda-memory-paths.md).
//
// glibc's dlsym looks at its caller's return address (RTLD_NEXT, and the caller's scope for
// RTLD_DEFAULT). So the entry point is an assembly trampoline (dlsym_trampoline_*.S) that asks
// gmt_dlsym_route where to go and then *jumps* there: calls we do not wrap reach glibc with the
// application's own return address, exactly as if we were not here.
#include <dlfcn.h>

#include <cstddef>

#include "interpose/recording/debug_log.h"
#include "interpose/hooks/driver_table.h"
#include "interpose/hooks/real_dlsym.h"
#include "interpose/recording/recorder.h"

namespace gpumemtrace::interpose {

namespace {

using DlsymFn = void* (*)(void*, const char*);
DlsymFn g_real_dlsym = nullptr;  // accessed with __atomic builtins (below)

// A sanitizer's runtime, preloaded ahead of the tracer in the sanitizer builds (docs/reliability.md), looks
// up the functions it intercepts with dlsym while it sets itself up, and that dlsym is ours: the route to
// glibc's must not use the sanitizer's instrumentation (its shadow memory does not exist yet), nor call
// anything that does (hence builtins, not std::atomic, whose members are functions of their own at -O0/-Og).
#define GMT_NOT_INSTRUMENTED __attribute__((no_sanitize("address", "undefined", "thread")))

GMT_NOT_INSTRUMENTED DlsymFn glibc_dlsym() {
  DlsymFn fn = __atomic_load_n(&g_real_dlsym, __ATOMIC_ACQUIRE);
  if (fn) return fn;
  static const char* const kVersions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
  for (size_t i = 0; i < sizeof kVersions / sizeof kVersions[0] && !fn; ++i)
    fn = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", kVersions[i]));
  __atomic_store_n(&g_real_dlsym, fn, __ATOMIC_RELEASE);
  return fn;
}

void* dlsym_wrapping(void* handle, const char* name) {
  void* result = glibc_dlsym()(handle, name);
  if (!result) return result;
  adopt_driver(result);
  void* wrapper = wrapper_for_real(result);
  if (wrapper) debug_log("dlsym(%s): handing out the tracer's wrapper", name);
  return wrapper ? wrapper : result;
}

}  // namespace

void* real_dlsym(void* handle, const char* name) { return glibc_dlsym()(handle, name); }

}  // namespace gpumemtrace::interpose

// Where the trampoline jumps: glibc's dlsym for everything we do not wrap (the common case), else our
// wrapping lookup. Lookups through RTLD_DEFAULT/RTLD_NEXT already find our exported wrappers first.
extern "C" __attribute__((visibility("hidden"))) GMT_NOT_INSTRUMENTED void* gmt_dlsym_route(void* handle,
                                                                                          const char* name) {
  using namespace gpumemtrace::interpose;
  bool candidate = name && name[0] == 'c' && name[1] == 'u' && handle != RTLD_DEFAULT && handle != RTLD_NEXT &&
                   !hook_state().busy && wrapper_for_name(name);
  return candidate ? reinterpret_cast<void*>(&dlsym_wrapping) : reinterpret_cast<void*>(glibc_dlsym());
}
