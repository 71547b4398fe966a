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

namespace {

// Fork's prepare handlers run in the reverse order of their registration. The recorder walks under its own
// lock, which its handler takes, so this lock must be taken after that one: registered first of all, by the
// library's earliest constructor.
__attribute__((constructor(101))) void hold_walks_across_fork() {
  pthread_atfork([] { loader_walk_mutex().lock(); }, [] { loader_walk_mutex().unlock(); },
                 [] { loader_walk_mutex().unlock(); });
}

}  // namespace

}  // namespace gpumemtrace::interpose
