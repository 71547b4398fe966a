/* annotate.h from C: phases around cudaMalloc calls. Prints what it did, which must be the same with and
 * without the tracer. */
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "gpumemtrace/annotate.h"

static void* allocate(size_t size) {
  void* ptr = NULL;
  if (cudaMalloc(&ptr, size) != cudaSuccess) {
    fprintf(stderr, "cudaMalloc(%zu) failed\n", size);
    return NULL;
  }
  return ptr;
}

int main(void) {
  void* kept[4];
  gmt_phase_push("load");
  kept[0] = allocate(301);
  gmt_phase_push("decode");
  kept[1] = allocate(302);
  gmt_phase_pop();
  kept[2] = allocate(303);
  gmt_phase_pop();
  kept[3] = allocate(304);
  for (int i = 0; i < 4; ++i)
    if (!kept[i] || cudaFree(kept[i]) != cudaSuccess) return 1;
  printf("done 4\n");
  return 0;
}
