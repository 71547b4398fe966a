// Where trace bytes go: a file written through a shared mapping, so every byte stored is in the page
// cache the moment it is stored and survives a SIGKILL of the process (memray's reason for mmap).
// Disk space is reserved ahead with fallocate: a full disk becomes a clean error here, never a SIGBUS
// in the traced program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "trace/writer/trace_file.h"

namespace gpumemtrace::writer {

class MappedFileSink {
 public:
  MappedFileSink() = default;
  MappedFileSink(const MappedFileSink&) = delete;
  MappedFileSink& operator=(const MappedFileSink&) = delete;
  ~MappedFileSink();

  // Creates a new file for `path` with `first_bytes` at its start (trace_file.h: never over a file another
  // process writes, not yet named where it can be) and maps it. On failure returns false and error() says why.
  bool open(const std::string& path, std::span<const uint8_t> first_bytes);
  // Gives the file its name, once what a reader needs first is written. False: error() says why.
  bool publish();
  // Where the file is (once published), and why that is not the path asked for (empty when it is).
  const std::string& path() const { return file_.path(); }
  const std::string& notice() const { return file_.notice(); }
  bool is_open() const { return base_ != nullptr; }

  // A pointer where `bytes` can be written at the current end, or nullptr if space ran out.
  uint8_t* reserve(size_t bytes) {
    if (size_ + bytes <= capacity_) return base_ + size_;
    return grow(bytes) ? base_ + size_ : nullptr;
  }
  void commit(size_t bytes) { size_ += bytes; }
  uint8_t* data() { return base_; }
  size_t size() const { return size_; }

  // Forces what is written so far to disk (used for out-of-memory events).
  void sync();
  // Cuts the file to the written size and closes it.
  void close();
  // Forgets the mapping without touching the file: a forked child must not write into its parent's trace.
  void abandon();

  const std::string& error() const { return error_; }
  bool failed() const { return failed_; }

 private:
  bool grow(size_t bytes);
  void release_written();

  TraceFile file_;
  uint8_t* base_ = nullptr;  // a large address reservation; the file is mapped over its start
  size_t reserved_ = 0;      // bytes of address space reserved at base_
  size_t capacity_ = 0;      // bytes of file mapped and backed by disk
  size_t size_ = 0;          // bytes written
  size_t released_ = 0;      // bytes at the start unmapped from the process (still in the file and page cache)
  std::string error_;
  bool failed_ = false;
};

}  // namespace gpumemtrace::writer
