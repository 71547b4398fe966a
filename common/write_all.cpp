#include "common/write_all.h"

#include <errno.h>
#include <unistd.h>

#include <system_error>

namespace gpumemtrace {

void write_all(int fd, std::span<const uint8_t> bytes, const std::string& what) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), what);
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
}

}  // namespace gpumemtrace
