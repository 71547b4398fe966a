// The exported dlsym. CUDA runtimes (static and shared), cuBLAS, NCCL and friends reach the driver with
// dlopen("libcuda.so.1") + dlsym(handle, "cuGetProcAddress_v2"); handing out our wrapper there is what
// makes every later driver lookup visible (docs/cuda-memory-paths.md).
//
// glibc's dlsym looks at its caller's return address (RTLD_NEXT, and the caller's scope for
// RTLD_DEFAULT). So the entry point is an assembly trampoline (trampolines_<arch>.S) that asks
// gmt_dlsym_route where to go and then *jumps* there: calls we do not wrap reach glibc with the
// application's own return address, exactly as if we were not here.
#include <dlfcn.h>

#include <atomic>
#include <cstddef>

#include "interpose/hooks/bypass_checks.h"
#include "interpose/hooks/driver_table.h"
#include "interpose/base/real_dlsym.h"
#include "interpose/base/debug_log.h"
#include "interpose/recording/recorder.h"

extern "C" void* gmt_dlsym_entry(void* handle, const char* name);  // the exported dlsym

namespace gpumemtrace::interpose {

namespace {

using DlsymFn = void* (*)(void*, const char*);
DlsymFn g_real_dlsym = nullptr;

GMT_NOT_INSTRUMENTED DlsymFn glibc_dlsym() { return cached_glibc_function(&g_real_dlsym, "dlsym"); }

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

GMT_NOT_INSTRUMENTED void* glibc_function(const char* name) {
  static const char* const kVersions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
  void* fn = nullptr;
  for (size_t i = 0; i < sizeof kVersions / sizeof kVersions[0] && !fn; ++i) fn = dlvsym(RTLD_NEXT, name, kVersions[i]);
  return fn;
}

// The runtime reached the driver through pointers it looked up without us. A dlsym defined ahead of ours that
// does not forward to it (straight to glibc's) explains that: the runtime's hooks still record its calls, but
// driver functions looked up through that dlsym are called untraced.
void on_runtime_allocation_unseen_by_driver() {
  static std::atomic<bool> explained{false};
  if (explained.exchange(true, std::memory_order_relaxed)) return;
  BusyGuard busy;
  // The program's handle searches the global scope in order (RTLD_DEFAULT from here would find ours first:
  // the tracer is linked -Bsymbolic).
  void* program = dlopen(nullptr, RTLD_LAZY | RTLD_NOLOAD);
  void* first = program ? real_dlsym(program, "dlsym") : nullptr;
  if (program) dlclose(program);
  Dl_info info;
  if (first && first != reinterpret_cast<void*>(&gmt_dlsym_entry) && dladdr(first, &info) && info.dli_fname) {
    warn("%s defines its own dlsym, which does not forward to the tracer's: CUDA runtime calls are traced, driver "
         "functions looked up through that dlsym are not",
         *info.dli_fname ? info.dli_fname : "the program");
  } else {
    debug_log("a runtime allocation reached the driver without passing the driver wrappers");
  }
}

}  // namespace gpumemtrace::interpose

// Where the trampoline jumps: glibc's dlsym for everything we do not wrap (the common case), else our
// wrapping lookup. Lookups through RTLD_DEFAULT/RTLD_NEXT already find our exported wrappers first.
extern "C" __attribute__((visibility("hidden"))) GMT_NOT_INSTRUMENTED void* gmt_dlsym_route(void* handle,
                                                                                          const char* name) {
  using namespace gpumemtrace::interpose;
  check_deepbind_loads();
  bool candidate = name && name[0] == 'c' && name[1] == 'u' && handle != RTLD_DEFAULT && handle != RTLD_NEXT &&
                   !hook_state().busy && wrapper_for_name(name);
  return candidate ? reinterpret_cast<void*>(&dlsym_wrapping) : reinterpret_cast<void*>(glibc_dlsym());
}
