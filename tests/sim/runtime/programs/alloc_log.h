// What a test program allocated, printed as it happens and summed up at the end (stable, parseable lines):
//   alloc api=<api> kind=<kind> size=<bytes> result=<code>
//   free api=<api> kind=<kind> size=<bytes> result=<code>
//   summary allocations=<n> allocated_bytes=<n> frees=<n> freed_bytes=<n>[ <extra>]
#pragma once

#include <cstddef>
#include <cstdio>

namespace alloc_log {

inline int g_allocations = 0, g_frees = 0;
inline std::size_t g_allocated = 0, g_freed = 0;

// `record` is "alloc" or "free"; a call counts when its result is 0 (success). Returns whether it succeeded.
inline bool log(const char* record, const char* api, const char* kind, std::size_t size, int result) {
  std::printf("%s api=%s kind=%s size=%zu result=%d\n", record, api, kind, size, result);
  if (result != 0) return false;
  bool is_alloc = record[0] == 'a';
  (is_alloc ? g_allocations : g_frees) += 1;
  (is_alloc ? g_allocated : g_freed) += size;
  return true;
}

inline void summary(const char* extra = "") {
  std::printf("summary allocations=%d allocated_bytes=%zu frees=%d freed_bytes=%zu%s\n", g_allocations, g_allocated,
              g_frees, g_freed, extra);
}

}  // namespace alloc_log
