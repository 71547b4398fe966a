#include "interpose/base/loader_walk.h"

#include <pthread.h>

namespace gpumemtrace::interpose {

std::mutex& loader_walk_mutex() {
  static std::mutex* mutex = new std::mutex();  // never destroyed: walks may happen during exit
  return *mutex;
}

int walk_loaded_objects(int (*callback)(dl_phdr_info*, size_t, void*), void* data) {
  return with_loader_walk([&] { return dl_iterate_phdr(callback, data); });
}

void guard_walks_across_fork() {
  [[maybe_unused]] static const int registered = [] {
    loader_walk_mutex();  // made now, while the library starts, not by a thread that may race a fork
    return pthread_atfork([] { loader_walk_mutex().lock(); }, [] { loader_walk_mutex().unlock(); },
                          [] { loader_walk_mutex().unlock(); });
  }();
}

namespace {

__attribute__((constructor(101))) void guard_walks_early() { guard_walks_across_fork(); }

}  // namespace

}  // namespace gpumemtrace::interpose
