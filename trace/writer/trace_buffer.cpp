#include "trace/writer/trace_buffer.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <system_error>

namespace gpumemtrace::writer {

TraceBuffer::~TraceBuffer() {
  if (memory_file_ >= 0) close(memory_file_);
}

void TraceBuffer::spill_to_memory_file() {
  if (memory_file_ >= 0) return;
  memory_file_ = memfd_create("gpumemtrace-converted", MFD_CLOEXEC);
  if (memory_file_ < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
}

void TraceBuffer::spill() {
  const uint8_t* data = bytes_.data();
  size_t left = bytes_.size();
  while (left > 0) {
    ssize_t n = ::write(memory_file_, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "writing the converted trace");
    data += n;
    left -= static_cast<size_t>(n);
  }
  bytes_.clear();
}

int TraceBuffer::take_memory_file() {
  spill_to_memory_file();
  spill();
  int taken = memory_file_;
  memory_file_ = -1;
  return taken;
}

}  // namespace gpumemtrace::writer
