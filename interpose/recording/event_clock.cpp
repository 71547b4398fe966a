#include "interpose/recording/event_clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpumemtrace::interpose {

bool time_stamp_counter_usable() {
#if defined(__x86_64__)
  // Read at the recorder's start, perhaps inside a hook: the program's errno stays as it was.
  int saved_errno = errno;
  char source[32] = {};
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, source, sizeof source - 1) : -1;
  if (fd >= 0) close(fd);
  errno = saved_errno;
  return n > 0 && std::strcmp(source, "tsc\n") == 0;
#else
  return false;
#endif
}

}  // namespace gpumemtrace::interpose
