// glibc's dlsym, for the tracer's own lookups (our exported one would route them back to us).
#pragma once

// A sanitizer's runtime, preloaded ahead of the tracer in the sanitizer builds (docs/reliability.md), looks
// up the functions it intercepts with dlsym while it sets itself up, and that dlsym is ours: the route to
// glibc's must not use the sanitizer's instrumentation (its shadow memory does not exist yet), nor call
// anything that does (hence builtins, not std::atomic, whose members are functions of their own at -O0/-Og).
#define GMT_NOT_INSTRUMENTED __attribute__((no_sanitize("address", "undefined", "thread")))

namespace gpumemtrace::interpose {

void* real_dlsym(void* handle, const char* name);

// glibc's own `name` (dlsym, dlopen) by its versions, which our exported ones carry too
// (trampolines_<arch>.S): the next definition after the tracer's.
GMT_NOT_INSTRUMENTED void* glibc_function(const char* name);

// The same, looked up once into `*cache`.
template <typename Fn>
GMT_NOT_INSTRUMENTED Fn cached_glibc_function(Fn* cache, const char* name) {
  Fn fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (fn) return fn;
  fn = reinterpret_cast<Fn>(glibc_function(name));
  __atomic_store_n(cache, fn, __ATOMIC_RELEASE);
  return fn;
}

}  // namespace gpumemtrace::interpose
