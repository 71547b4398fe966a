#include "interpose/base/debug_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace gpumemtrace::interpose {

namespace {
int g_debug_fd = -1;

void write_line(int fd, const char* format, va_list args) {
  char line[1024];
  int prefix = std::snprintf(line, sizeof line, "gpumemtrace[%d]: ", static_cast<int>(getpid()));
  int body = std::vsnprintf(line + prefix, sizeof line - static_cast<size_t>(prefix) - 1, format, args);
  size_t length = static_cast<size_t>(prefix) + (body < 0 ? 0 : static_cast<size_t>(body));
  if (length > sizeof line - 2) length = sizeof line - 2;
  line[length++] = '\n';
  ssize_t ignored = write(fd, line, length);
  (void)ignored;
}
}  // namespace

void configure_debug_log(const char* destination) {
  if (!destination || !*destination || std::strcmp(destination, "0") == 0) return;
  if (std::strcmp(destination, "1") == 0 || std::strcmp(destination, "stderr") == 0) {
    g_debug_fd = STDERR_FILENO;
    return;
  }
  // Never blocks (a FIFO without a reader would hang the program here) and writes only into a regular file.
  int fd = open(destination, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd < 0) {
    warn("GPUMEMTRACE_DEBUG=%s cannot be opened (%s): no debug log", destination, std::strerror(errno));
    return;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    warn("GPUMEMTRACE_DEBUG=%s is not a regular file: no debug log (GPUMEMTRACE_DEBUG=stderr writes it on stderr)",
         destination);
    return;
  }
  g_debug_fd = fd;
}

bool debug_enabled() { return g_debug_fd >= 0; }

void debug_log(const char* format, ...) {
  if (g_debug_fd < 0) return;
  va_list args;
  va_start(args, format);
  write_line(g_debug_fd, format, args);
  va_end(args);
}

void warn(const char* format, ...) {
  va_list args;
  va_start(args, format);
  write_line(STDERR_FILENO, format, args);
  va_end(args);
}

}  // namespace gpumemtrace::interpose
