#include "trace/reader/trace_file.h"

#include <unistd.h>

#include <system_error>

#include "trace/packed/packed_format.h"
#include "trace/packed/unpack.h"
#include "trace/packed/zstd_streams.h"
#include "trace/reader/open_error.h"

namespace gpumemtrace::trace {

TraceFile::TraceFile(const std::string& path) : path_(path) {
  MappedFile file(path);
  if (!packed::is_packed(file.bytes())) return;
  try {
    unpacked_ = packed::unpack_to_memory_file(file.bytes());
  } catch (const packed::PackedError& error) {
    throw OpenError(std::string("corrupt packed trace: ") + error.what());
  } catch (const std::system_error& error) {
    throw OpenError(std::string("cannot unpack the packed trace: ") + error.what());
  }
}

TraceFile::~TraceFile() {
  if (unpacked_ >= 0) close(unpacked_);
}

std::unique_ptr<MappedFile> TraceFile::map() const {
  // A trace still being written is read up to where it was when this reading started.
  return unpacked_ >= 0 ? std::make_unique<MappedFile>(unpacked_) : std::make_unique<MappedFile>(path_);
}

}  // namespace gpumemtrace::trace
