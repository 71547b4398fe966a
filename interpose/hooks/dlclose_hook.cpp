// The exported dlclose. After an unload, the library's code addresses may be reused by the next library
// loaded there, so the fast stack walker's cached frame rules are forgotten around every dlclose.
#include <dlfcn.h>

#include "interpose/stacks/native/frame_rule_cache.h"
#include "interpose/base/real_dlsym.h"

extern "C" __attribute__((visibility("default"))) int dlclose(void* handle) {
  using DlcloseFn = int (*)(void*);
  static const auto real = reinterpret_cast<DlcloseFn>(gpumemtrace::interpose::real_dlsym(RTLD_NEXT, "dlclose"));
  gpumemtrace::interpose::forget_frame_rules();
  int rc = real(handle);
  gpumemtrace::interpose::forget_frame_rules();
  return rc;
}
