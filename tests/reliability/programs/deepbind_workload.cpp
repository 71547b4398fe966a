// Loads argv[1], a plugin (deepbind_*_library.cpp), with RTLD_DEEPBIND and has it make argv[2] allocations.
// With argv[3] = "runtime-first", the CUDA runtime is loaded into the global scope before the plugin.
// Prints "done N" (the allocations the plugin made) and "bytes B" (their total size).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  int count = std::atoi(argv[2]);
  if (argc > 3 && std::strcmp(argv[3], "runtime-first") == 0 && !dlopen("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL)) {
    std::fprintf(stderr, "dlopen libcudart.so.13: %s\n", dlerror());
    return 3;
  }
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_DEEPBIND);
  if (!plugin) {
    std::fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
    return 3;
  }
  auto allocate = reinterpret_cast<int (*)(int)>(dlsym(plugin, "plugin_allocate"));
  if (!allocate) return 4;
  int made = allocate(count);
  if (made != count) {
    std::fprintf(stderr, "plugin_allocate returned %d\n", made);
    return 1;
  }
  unsigned long long bytes = 0;
  for (int i = 0; i < count; ++i) bytes += static_cast<unsigned long long>(i + 1) * 4096 + 100;
  std::printf("done %d\nbytes %llu\n", made, bytes);
  return 0;
}
