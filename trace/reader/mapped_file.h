// A whole file mapped read-only. The mapping is taken at the file's size when opened, so a trace that is
// still being written can be read up to that point, and a trace bigger than RAM is paged in as it is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace gpumemtrace::trace {

class Unpacking;

class MappedFile {
 public:
  // Whether a symbolic link at the path is followed: not for a file another file names (a trace's snapshot).
  enum class Links { Follow, NotFollowed };
  // Opens regular files only, and never blocks (a FIFO fails at once with "not a regular file"). Throws
  // OpenError ("cannot open: No such file or directory", ...).
  explicit MappedFile(const std::string& path, Links links = Links::Follow);
  // A file already open (the unpacked copy of a packed trace, opened_trace.h); the descriptor stays the caller's.
  explicit MappedFile(int descriptor);
  // The memory file of a packed trace being unpacked (unpacking.h), as far as it is unpacked now; it may grow.
  // The mapping reserves the unpacking's bound. Throws OpenError when the unpacking failed.
  explicit MappedFile(std::shared_ptr<Unpacking> unpacking);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }

  // Whether the file may still grow: it is being unpacked.
  bool may_grow() const { return unpacking_ && !whole_; }
  // Waits until the file grows or is whole; its bytes then (the same start). Throws OpenError when the
  // unpacking failed.
  std::span<const uint8_t> wait_longer();
  // The file's size, or while it grows, what it is expected to reach.
  uint64_t expected_size() const;

  // Drops the pages before `offset` from this process's memory; reading them again faults them back in
  // from the file. Keeps a long sequential read's RSS flat instead of growing with the file. And asks the
  // kernel to read the file up to kReadAhead past `offset` into the page cache (not into this process).
  void release_before(size_t offset);
  static constexpr size_t kReadAhead = size_t{64} << 20;
  // The same for the whole pages inside `part` of bytes() (a packed trace's streams, each read on its own).
  void release(std::span<const uint8_t> part);

 private:
  void map(int descriptor);

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // the mapping's length: size_, or an unpacking's bound
  size_t released_ = 0;
  size_t read_ahead_ = 0;  // the file is asked for up to here
  std::shared_ptr<Unpacking> unpacking_;
  bool whole_ = false;
};

}  // namespace gpumemtrace::trace
