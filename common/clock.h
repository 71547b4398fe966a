// A clock's reading in nanoseconds (CLOCK_REALTIME for wall-clock times, CLOCK_BOOTTIME to compare with
// process start times).
#pragma once

#include <time.h>

#include <cstdint>

namespace gpumemtrace {

inline uint64_t clock_ns(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace gpumemtrace
