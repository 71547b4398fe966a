/* Does what a CUDA driver does with CUDA_INJECTION64_PATH at cuInit: loads the library named there and calls
   its InitializeInjection. (Only NVIDIA's real driver does this; neither its stub nor the simulated device.) */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  const char* path = getenv("CUDA_INJECTION64_PATH");
  void* library = path ? dlopen(path, RTLD_NOW) : NULL;
  if (!library) {
    printf("cannot load %s\n", path ? path : "(CUDA_INJECTION64_PATH unset)");
    return 2;
  }
  int (*initialize)(void) = (int (*)(void))dlsym(library, "InitializeInjection");
  if (!initialize) {
    printf("InitializeInjection is not exported\n");
    return 3;
  }
  printf("InitializeInjection returned %d\n", initialize());
  return 0;
}
