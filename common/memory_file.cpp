#include "common/memory_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>

#include <cstdlib>
#include <system_error>

namespace gpumemtrace {

int create_memory_file(const char* name) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
  return fd;
}

int create_scratch_file(const char* name) {
  for (const char* directory : {static_cast<const char*>(std::getenv("TMPDIR")), "/var/tmp", "/tmp"}) {
    if (!directory || !*directory) continue;
    int fd = open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
  }
  return create_memory_file(name);
}

}  // namespace gpumemtrace
