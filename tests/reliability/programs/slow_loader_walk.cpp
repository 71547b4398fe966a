// Preloaded beside the tracer: a walk of the loader's list (dl_iterate_phdr) made by any thread but the main
// one holds the loader's lock for 100 ms, as a walk over hundreds of libraries on a loaded machine may, so
// that the main thread's forks land in the middle of one.
#include <dlfcn.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

using Callback = int (*)(dl_phdr_info*, size_t, void*);

struct SlowWalk {
  Callback callback;
  void* data;
  bool slept;
};

int slow_callback(dl_phdr_info* info, size_t size, void* data) {
  auto* walk = static_cast<SlowWalk*>(data);
  if (!walk->slept) {
    walk->slept = true;
    usleep(100 * 1000);
  }
  return walk->callback(info, size, walk->data);
}

}  // namespace

extern "C" int dl_iterate_phdr(Callback callback, void* data) {
  static auto real = reinterpret_cast<int (*)(Callback, void*)>(dlsym(RTLD_NEXT, "dl_iterate_phdr"));
  if (syscall(SYS_gettid) == getpid()) return real(callback, data);
  SlowWalk walk{callback, data, false};
  return real(slow_callback, &walk);
}
