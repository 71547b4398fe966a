// A file in memory (memfd): where a trace rewritten on the way in (unpacked, converted, of an older layout)
// is put, so the reader maps it as it maps a trace on disk. And, for such a trace too large to hold in
// memory, a scratch file on disk.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <span>
#include <string>

#include "common/write_all.h"

namespace gpumemtrace {

// A new, empty memory file, closed on exec; throws std::system_error.
int create_memory_file(const char* name);

// A new, empty file without a name (O_TMPFILE) in $TMPDIR, else /var/tmp, else /tmp, closed on exec: gone
// with its last descriptor or mapping, even after a crash. Its pages are the page cache's, which the kernel
// writes out and takes back when memory runs short, where a memory file's stay in memory (or swap) whole.
// A memory file when none of those directories takes one.
int create_scratch_file(const char* name);

// A new memory file holding what `fill` writes through the function it is given (a span of bytes each call);
// closed again if anything throws. `what` names the writing in an error ("writing the unpacked trace").
template <typename Fill>
int memory_file_of(const char* name, const std::string& what, Fill&& fill) {
  int fd = create_memory_file(name);
  try {
    fill([&](std::span<const uint8_t> bytes) { write_all(fd, bytes, what); });
  } catch (...) {
    close(fd);
    throw;
  }
  return fd;
}

}  // namespace gpumemtrace
