/* The cost of include/gpumemtrace/annotate.h in a process without the tracer (docs/benchmarks.md,
 * "Annotations without the tracer"): nanoseconds per call of each annotation, against the same loop around an
 * empty call. Each call is behind a compiler barrier so that the loop is not folded away. */
#include <gpumemtrace/annotate.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

__attribute__((noinline)) static void empty_call(const void* p) { __asm__ volatile("" : : "r"(p) : "memory"); }

#define MEASURE(label, statement)                                                  \
  do {                                                                             \
    double start = now_ns();                                                       \
    for (long i = 0; i < calls; ++i) {                                             \
      statement;                                                                   \
      __asm__ volatile("" ::: "memory");                                           \
    }                                                                              \
    printf("| %s | %.2f |\n", label, (now_ns() - start) / (double)calls);          \
  } while (0)

int main(int argc, char** argv) {
  long calls = argc > 1 ? atol(argv[1]) : 100000000L;
  char block[64];
  printf("| call (%ld times) | ns per call |\n|---|---:|\n", calls);
  MEASURE("an empty function (the loop)", empty_call(block));
  MEASURE("gmt_phase_push + gmt_phase_pop", (gmt_phase_push("step"), gmt_phase_pop()));
  MEASURE("gmt_suballoc + gmt_subfree", (gmt_suballoc(1, block, 64, 64), gmt_subfree(1, block)));
  MEASURE("gmt_suballoc_name", gmt_suballoc_name(1, block, "activations"));
  return 0;
}
