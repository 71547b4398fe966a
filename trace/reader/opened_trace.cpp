#include "trace/reader/opened_trace.h"

#include <unistd.h>

#include <system_error>

#include "trace/packed/packed_format.h"
#include "trace/packed/unpack.h"
#include "trace/packed/zstd_streams.h"
#include "trace/reader/open_error.h"

namespace gpumemtrace::trace {

namespace {

// The descriptor of a memory file holding the unpacked trace.
int unpack(std::span<const uint8_t> packed_bytes) {
  try {
    return packed::unpack_to_memory_file(packed_bytes);
  } catch (const packed::PackedError& error) {
    throw OpenError(std::string("corrupt packed trace: ") + error.what());
  } catch (const std::system_error& error) {
    throw OpenError(std::string("cannot unpack the packed trace: ") + error.what());
  }
}

}  // namespace

OpenedTrace::OpenedTrace(const std::string& path) : path_(path) {
  MappedFile file(path);
  if (packed::is_packed(file.bytes())) unpacked_ = unpack(file.bytes());
}

OpenedTrace::~OpenedTrace() {
  if (unpacked_ >= 0) close(unpacked_);
}

std::unique_ptr<MappedFile> OpenedTrace::map() const {
  // A trace still being written is read up to where it was when this reading started.
  return unpacked_ >= 0 ? std::make_unique<MappedFile>(unpacked_) : std::make_unique<MappedFile>(path_);
}

std::unique_ptr<MappedFile> OpenedTrace::map_once(const std::string& path) {
  auto file = std::make_unique<MappedFile>(path);
  if (!packed::is_packed(file->bytes())) return file;
  int unpacked = unpack(file->bytes());
  auto copy = std::make_unique<MappedFile>(unpacked);  // the mapping keeps the memory file alive
  close(unpacked);
  return copy;
}

}  // namespace gpumemtrace::trace
