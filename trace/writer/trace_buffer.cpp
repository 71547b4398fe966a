#include "trace/writer/trace_buffer.h"

#include <unistd.h>

#include "common/memory_file.h"

namespace gpumemtrace::writer {

TraceBuffer::~TraceBuffer() {
  if (memory_file_ >= 0) close(memory_file_);
}

void TraceBuffer::spill_to_memory_file() {
  if (memory_file_ >= 0) return;
  memory_file_ = create_memory_file("gpumemtrace-converted");
}

void TraceBuffer::spill() {
  write_all(memory_file_, bytes_, "writing the converted trace");
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
