// A whole file mapped read-only. The mapping is taken at the file's size when opened, so a trace that is
// still being written can be read up to that point, and a trace bigger than RAM is paged in as it is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace gpumemtrace::trace {

class MappedFile {
 public:
  // Whether a symbolic link at the path is followed: not for a file another file names (a trace's snapshot).
  enum class Links { Follow, NotFollowed };
  // Opens regular files only, and never blocks (a FIFO fails at once with "not a regular file"). Throws
  // OpenError ("cannot open: No such file or directory", ...).
  explicit MappedFile(const std::string& path, Links links = Links::Follow);
  // A file already open (the unpacked copy of a packed trace, opened_trace.h); the descriptor stays the caller's.
  explicit MappedFile(int descriptor);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }

  // Drops the pages before `offset` from this process's memory; reading them again faults them back in
  // from the file. Keeps a long sequential read's RSS flat instead of growing with the file.
  void release_before(size_t offset);

 private:
  void map(int descriptor);

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;
};

}  // namespace gpumemtrace::trace
