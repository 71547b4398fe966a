// The exported dlopen, a trampoline like dlsym (trampolines_<arch>.S): glibc's dlopen reads its caller's
// return address too (the caller's RUNPATH, its namespace), so every call reaches glibc's with the
// application's own.
//
// It only watches for RTLD_DEEPBIND. A library loaded that way binds to its own dependencies before the
// global scope, so when those include the CUDA driver, or a CUDA runtime loaded with it (whose dlsym is then
// glibc's), its calls go around the tracer's exported names. That cannot be seen from inside the dlopen (a
// trampoline does not come back), so the load is looked at on the next dlsym (which is how a program finds a
// plugin's functions) or dlopen, or at exit, and said once on stderr.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "interpose/hooks/bypass_checks.h"
#include "interpose/base/loader_walk.h"
#include "interpose/base/real_dlsym.h"
#include "interpose/base/debug_log.h"
#include "interpose/recording/recorder.h"

namespace gpumemtrace::interpose {

namespace {

using DlopenFn = void* (*)(const char*, int);
DlopenFn g_glibc_dlopen = nullptr;

GMT_NOT_INSTRUMENTED DlopenFn glibc_dlopen() { return cached_glibc_function(&g_glibc_dlopen, "dlopen"); }

struct DeepbindLoad {
  std::string file;
  std::vector<std::string> loaded_before;  // the objects loaded when it was asked for
};

// The loader's lock is never taken under g_mutex: a library's constructor runs under the loader's lock and
// may call dlsym, which comes here.
std::mutex g_mutex;
std::vector<DeepbindLoad> g_pending;
bool g_pending_any = false;  // g_pending is not empty; read with __atomic builtins outside the lock
std::atomic<bool> g_warned{false};

std::vector<std::string> loaded_objects() {
  std::vector<std::string> names;
  walk_loaded_objects(
      [](dl_phdr_info* info, size_t, void* out) {
        static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name ? info->dlpi_name : "");
        return 0;
      },
      &names);
  return names;
}

void note(const char* file) {
  if (g_warned.load(std::memory_order_relaxed)) return;
  BusyGuard busy;
  // Already loaded: its scope was fixed by its first load, DEEPBIND or not.
  if (void* loaded = glibc_dlopen()(file, RTLD_LAZY | RTLD_NOLOAD)) {
    dlclose(loaded);
    return;
  }
  DeepbindLoad load{file, loaded_objects()};
  std::lock_guard lock(g_mutex);
  g_pending.push_back(std::move(load));
  __atomic_store_n(&g_pending_any, true, __ATOMIC_RELEASE);
}

// Why `load`'s own calls go around the tracer, or nullptr if they do not.
const char* bypass_of(const DeepbindLoad& load, void* handle) {
  if (real_dlsym(handle, "cuGetProcAddress_v2")) return "binds to the CUDA driver itself";
  void* runtime_malloc = real_dlsym(handle, "cudaMalloc");
  Dl_info runtime;
  if (!runtime_malloc || !dladdr(runtime_malloc, &runtime) || !runtime.dli_fname) return nullptr;
  if (std::find(load.loaded_before.begin(), load.loaded_before.end(), runtime.dli_fname) != load.loaded_before.end()) {
    debug_log("%s was loaded with RTLD_DEEPBIND; its runtime %s was loaded before it and reaches the driver through "
              "the tracer: its allocations are recorded under the driver API",
              load.file.c_str(), runtime.dli_fname);
    return nullptr;
  }
  return "brought its own CUDA runtime, which reaches the driver around the tracer";
}

void check_pending() {
  BusyGuard busy;
  std::vector<DeepbindLoad> loads;
  {
    std::lock_guard lock(g_mutex);
    loads.swap(g_pending);
    __atomic_store_n(&g_pending_any, false, __ATOMIC_RELEASE);
  }
  for (const DeepbindLoad& load : loads) {
    void* handle = glibc_dlopen()(load.file.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) continue;  // the load failed
    const char* why = bypass_of(load, handle);
    if (why && recording_enabled() && !g_warned.exchange(true)) {
      warn("%s was loaded with RTLD_DEEPBIND and %s: the GPU memory it allocates is not traced",
           load.file.c_str(), why);
    }
    dlclose(handle);
  }
}

}  // namespace

GMT_NOT_INSTRUMENTED void check_deepbind_loads() {
  if (__atomic_load_n(&g_pending_any, __ATOMIC_ACQUIRE)) check_pending();
}

}  // namespace gpumemtrace::interpose

// Where the trampoline jumps: always glibc's dlopen.
extern "C" __attribute__((visibility("hidden"))) GMT_NOT_INSTRUMENTED void* gmt_dlopen_route(const char* file,
                                                                                           int mode) {
  using namespace gpumemtrace::interpose;
  check_deepbind_loads();
  if ((mode & RTLD_DEEPBIND) && file) note(file);
  return reinterpret_cast<void*>(glibc_dlopen());
}
