#include "trace/reader/opened_trace.h"

#include <unistd.h>

#include <system_error>

#include "trace/legacy/first_layout.h"
#include "trace/packed/packed_format.h"
#include "trace/packed/unpack.h"
#include "trace/packed/zstd_streams.h"
#include "trace/reader/open_error.h"
#include "trace/reader/reader.h"

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

int rewrite(std::span<const uint8_t> first_layout) {
  try {
    return legacy::to_current_layout_in_memory_file(first_layout);
  } catch (const std::system_error& error) {
    throw OpenError(std::string("cannot rewrite the trace of the first layout: ") + error.what());
  }
}

// The memory file that holds the trace in today's layout, or -1 when the file is read as it is.
int rewritten(std::span<const uint8_t> bytes) {
  if (packed::is_packed(bytes)) return unpack(bytes);
  if (is_first_layout(bytes)) return rewrite(bytes);
  return -1;
}

}  // namespace

bool is_first_layout(std::span<const uint8_t> bytes) {
  size_t reach = legacy::first_layout_reach(bytes);
  if (reach == 0) return false;
  Reader reader(bytes);
  while (reader.stop_offset() < reach && reader.next()) {
  }
  return reader.status() == Status::Corrupt && reader.stop_offset() < reach;
}

OpenedTrace::OpenedTrace(const std::string& path, uint64_t unpacked_in_memory_at_most) : path_(path) {
  auto file = std::make_unique<MappedFile>(path);
  if (packed::is_packed(file->bytes())) {
    std::optional<uint64_t> bound;
    try {
      bound = packed::unpacked_size_bound(file->bytes());
    } catch (const packed::PackedError& error) {
      throw OpenError(std::string("corrupt packed trace: ") + error.what());
    }
    if (bound) {
      unpacking_ = std::make_shared<Unpacking>(std::move(file), *bound, unpacked_in_memory_at_most);
      return;
    }
  }
  unpacked_ = rewritten(file->bytes());
}

OpenedTrace::~OpenedTrace() {
  if (unpacked_ >= 0) close(unpacked_);
}

std::unique_ptr<MappedFile> OpenedTrace::map() const {
  if (unpacking_) {
    unpacking_->wait_whole();
    return std::make_unique<MappedFile>(unpacking_->descriptor());
  }
  // A trace still being written is read up to where it was when this reading started.
  return unpacked_ >= 0 ? std::make_unique<MappedFile>(unpacked_) : std::make_unique<MappedFile>(path_);
}

std::unique_ptr<MappedFile> OpenedTrace::map_as_it_comes() const {
  if (!unpacking_) return map();
  try {
    return std::make_unique<MappedFile>(unpacking_);
  } catch (const OpenError&) {
    // The bound could not be reserved (a limit on address space): the whole, once unpacked. An unpacking
    // that failed throws again here.
    return map();
  }
}

std::unique_ptr<MappedFile> OpenedTrace::map_once(const std::string& path) {
  auto file = std::make_unique<MappedFile>(path);
  int unpacked = rewritten(file->bytes());
  if (unpacked < 0) return file;
  auto copy = std::make_unique<MappedFile>(unpacked);  // the mapping keeps the memory file alive
  close(unpacked);
  return copy;
}

}  // namespace gpumemtrace::trace
