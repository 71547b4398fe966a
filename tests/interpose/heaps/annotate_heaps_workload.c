/* annotate.h from C: a small caching allocator that hands out blocks from one 2 MiB segment (cudaMalloc),
 * sizes rounded up to 512 bytes, first fit, and says so through gmt_heap_create/gmt_suballoc/gmt_subfree (and names a block).
 * With the argument "oom" (run on a 4 MiB simulated device), it then asks the device for 3 MiB while the
 * segment holds two blocks: more than the device has free, less than that plus the segment's free gaps,
 * more than its largest gap. Prints what it did, which must be the same with and without the tracer.
 * After the first free it pauses 2 ms: the moment the tests ask the analyzer's figures at (fragmentation --at),
 * which no later record shares (the trace's clock counts microseconds). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gpumemtrace/annotate.h"

#define SEGMENT_SIZE (2u << 20)
#define ROUNDING 512u
#define MAX_BLOCKS 8

struct block {
  size_t offset, reserved;
  int used;
};

static char* segment;
static gmt_heap heap;
static struct block blocks[MAX_BLOCKS];
static int block_count;

static size_t round_up(size_t size) { return (size + ROUNDING - 1) / ROUNDING * ROUNDING; }

/* First fit among freed blocks of the same reserved size, else the end of the used part. */
static void* cache_alloc(size_t size) {
  size_t reserved = round_up(size), end = 0;
  for (int i = 0; i < block_count; ++i) {
    if (!blocks[i].used && blocks[i].reserved == reserved) {
      blocks[i].used = 1;
      gmt_suballoc(heap, segment + blocks[i].offset, size, reserved);
      return segment + blocks[i].offset;
    }
    end = blocks[i].offset + blocks[i].reserved;
  }
  if (block_count == MAX_BLOCKS || end + reserved > SEGMENT_SIZE) return NULL;
  blocks[block_count] = (struct block){end, reserved, 1};
  ++block_count;
  gmt_suballoc(heap, segment + end, size, reserved);
  return segment + end;
}

static void cache_free(void* ptr) {
  for (int i = 0; i < block_count; ++i)
    if (segment + blocks[i].offset == (char*)ptr) blocks[i].used = 0;
  gmt_subfree(heap, ptr);
}

static void cache_reset(void) {
  block_count = 0;
  gmt_heap_reset(heap);
}

int main(int argc, char** argv) {
  if (cudaMalloc((void**)&segment, SEGMENT_SIZE) != cudaSuccess) return 1;
  heap = gmt_heap_create("small", 0, segment, SEGMENT_SIZE);
  void* a = cache_alloc(1000);  /* [0, 1024) */
  gmt_suballoc_name(heap, a, "weights");
  void* b = cache_alloc(3000);  /* [1024, 4096) */
  void* c = cache_alloc(512);   /* [4096, 4608) */
  cache_free(b);
  nanosleep(&(struct timespec){0, 2000000}, NULL);
  if (argc > 1 && strcmp(argv[1], "oom") == 0) { /* blocks [0, 1024) and [4096, 4608) are live */
    void* large = NULL;
    printf("large %d\n", (int)cudaMalloc(&large, 3u << 20));
  }
  void* d = cache_alloc(2600);  /* b's block again: [1024, 4096) */
  int reused = d == b;
  cache_reset();
  void* e = cache_alloc(100);   /* [0, 512) */
  cache_free(e);
  gmt_heap_destroy(heap);
  gmt_suballoc(0, segment, 64, 0); /* a block of no heap */
  gmt_subfree(0, segment);
  if (cudaFree(segment) != cudaSuccess) return 1;
  printf("blocks %td %td %td reused %d %td\n", (char*)a - segment, (char*)c - segment, (char*)d - segment, reused,
         (char*)e - segment);
  return 0;
}
