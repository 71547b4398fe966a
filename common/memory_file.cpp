#include "common/memory_file.h"

#include <errno.h>
#include <sys/mman.h>

#include <system_error>

namespace gpumemtrace {

int create_memory_file(const char* name) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
  return fd;
}

}  // namespace gpumemtrace
