/* gpumemtrace annotations: phases a program marks itself, recorded by libgpumemtrace.so when it is loaded
 * (LD_PRELOAD). Header-only C (and C++). Without the tracer every call costs one lookup on its first use
 * (dlsym(RTLD_DEFAULT) of the tracer's entry point, cached per translation unit) and a test after that; it
 * changes nothing. Link with -ldl on glibc before 2.34.
 *
 *   gmt_phase_push("validation");
 *   ...                                // allocations made here are in the phase "validation"
 *   gmt_phase_pop();
 *
 * Phases nest per thread, like NVTX's nvtxRangePush/Pop, and are recorded the same way
 * (docs/capture.md, "Phases").
 *
 * A program's own (caching) allocator says which memory it sub-allocates and which blocks it hands out:
 *
 *   gmt_heap h = gmt_heap_create("small", device, segment, segment_size);  // 0 without the tracer
 *   gmt_suballoc(h, block, asked, rounded);   // a block: the size asked, and the size set aside for it
 *   gmt_suballoc_name(h, block, "activations");  // what the block holds (optional)
 *   gmt_subfree(h, block);                     // the block goes back to the heap
 *   gmt_heap_reset(h);                         // every block of the heap is free
 *   gmt_heap_destroy(h);                       // the heap's memory goes back
 *
 * Each block is recorded with the stack that called gmt_suballoc (docs/capture.md, "Heaps"). */
#ifndef GPUMEMTRACE_ANNOTATE_H
#define GPUMEMTRACE_ANNOTATE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The tracer's entry point `name`, or 0 when it is not loaded; looked up once per cache. */
static inline void* gmt_detail_entry(void** cache, const char* name) {
  void* entry = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (entry == (void*)cache) { /* not looked up yet */
    entry = dlsym(RTLD_DEFAULT, name);
    __atomic_store_n(cache, entry, __ATOMIC_RELEASE);
  }
  return entry;
}
typedef void (*gmt_detail_name_fn)(const char*);
typedef void (*gmt_detail_void_fn)(void);
typedef unsigned long long gmt_heap; /* a heap's handle; 0 when the tracer is not loaded */
typedef gmt_heap (*gmt_detail_heap_create_fn)(const char*, int, const void*, size_t);
typedef void (*gmt_detail_heap_fn)(gmt_heap);
typedef void (*gmt_detail_suballoc_fn)(gmt_heap, const void*, size_t, size_t);
typedef void (*gmt_detail_subfree_fn)(gmt_heap, const void*);
typedef void (*gmt_detail_suballoc_name_fn)(gmt_heap, const void*, const char*);
#define GMT_DETAIL_ENTRY(type, name)                                  \
  static void* gmt_detail_cache_##name = &gmt_detail_cache_##name; \
  type entry = (type)gmt_detail_entry(&gmt_detail_cache_##name, "gpumemtrace_" #name)

/* The calling thread enters the phase `name` (copied), nested in the phases it is in. */
static inline void gmt_phase_push(const char* name) {
  GMT_DETAIL_ENTRY(gmt_detail_name_fn, phase_push);
  if (entry) entry(name);
}

/* The calling thread leaves its innermost phase pushed with gmt_phase_push. */
static inline void gmt_phase_pop(void) {
  GMT_DETAIL_ENTRY(gmt_detail_void_fn, phase_pop);
  if (entry) entry();
}

/* A heap named `name` (copied) on `device` (-1: not said) that blocks are sub-allocated from: the memory
 * [base, base+size) (size 0: not said). Returns its handle, 0 when the tracer is not loaded. */
static inline gmt_heap gmt_heap_create(const char* name, int device, const void* base, size_t size) {
  GMT_DETAIL_ENTRY(gmt_detail_heap_create_fn, heap_create);
  return entry ? entry(name, device, base, size) : 0;
}

/* The heap is gone, with its blocks. */
static inline void gmt_heap_destroy(gmt_heap heap) {
  GMT_DETAIL_ENTRY(gmt_detail_heap_fn, heap_destroy);
  if (entry) entry(heap);
}

/* Every block of the heap is freed at once. */
static inline void gmt_heap_reset(gmt_heap heap) {
  GMT_DETAIL_ENTRY(gmt_detail_heap_fn, heap_reset);
  if (entry) entry(heap);
}

/* The block at `block` is handed out from `heap` (0: from no heap) for a request of `size` bytes;
 * `reserved` is what the allocator set aside for it (rounded up, or with a split's remainder; 0: not said). */
static inline void gmt_suballoc(gmt_heap heap, const void* block, size_t size, size_t reserved) {
  GMT_DETAIL_ENTRY(gmt_detail_suballoc_fn, suballoc);
  if (entry) entry(heap, block, size, reserved);
}

/* The live block at `block` in `heap` holds `name` (copied): what it is for, until it is freed or named
 * again. */
static inline void gmt_suballoc_name(gmt_heap heap, const void* block, const char* name) {
  GMT_DETAIL_ENTRY(gmt_detail_suballoc_name_fn, suballoc_name);
  if (entry) entry(heap, block, name);
}

/* The block at `block` goes back to `heap`. */
static inline void gmt_subfree(gmt_heap heap, const void* block) {
  GMT_DETAIL_ENTRY(gmt_detail_subfree_fn, subfree);
  if (entry) entry(heap, block);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUMEMTRACE_ANNOTATE_H */
