// Every walk the tracer makes over the loader's list of objects (dl_iterate_phdr, and libunwind, which
// calls it) goes through here. glibc's fork does not reset the lock dl_iterate_phdr takes (2.36 does not),
// so a child forked while another thread of the parent was walking hangs at its own first walk, and the
// tracer's child walks at its first event. A fork therefore waits for a walk in progress, and no walk
// starts while a fork is under way.
#pragma once

#include <link.h>

#include <mutex>

namespace gpumemtrace::interpose {

std::mutex& loader_walk_mutex();

// Makes fork wait for a walk in progress (pthread_atfork, once). Fork runs the prepare handlers registered
// later first, and the recorder walks under its own lock, which its handler takes: so whatever walks under a
// lock calls this before registering its own handlers. The library's first constructor calls it too.
void guard_walks_across_fork();

// dl_iterate_phdr, serialized with fork.
int walk_loaded_objects(int (*callback)(dl_phdr_info*, size_t, void*), void* data);

// Runs `walk`, which may walk the loader's list itself (an unwinder), serialized with fork.
template <typename Walk>
auto with_loader_walk(Walk&& walk) {
  std::lock_guard lock(loader_walk_mutex());
  return walk();
}

}  // namespace gpumemtrace::interpose
