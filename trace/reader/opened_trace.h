// A trace opened once for any number of readings. A packed trace (trace/packed) is unpacked here, once,
// into a memory file (a scratch file on disk for a long one) holding the version-1 trace it was made from,
// and every reading maps that copy; a trace in the first commit's layout (trace/legacy) is rewritten in
// today's into a memory file; a trace made in memory comes as such a memory file; any other trace is mapped
// afresh by each reading.
//
// The unpacking runs on a thread of its own (unpacking.h): opening returns at once, a reading that takes the
// trace as it comes (map_as_it_comes) reads while it is unpacked, and map() waits for the whole.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "trace/reader/mapped_file.h"
#include "trace/reader/unpacking.h"

namespace gpumemtrace::trace {

// A trace in the first commit's layout (trace/legacy/first_layout.h): that layout reads it further than
// today's, which stops as corrupt before. Opening such a trace rewrites it in today's layout.
bool is_first_layout(std::span<const uint8_t> bytes);

class OpenedTrace {
 public:
  // Throws OpenError: unreadable, or a packed trace whose directory of streams is damaged (damage inside
  // the streams is found as they are unpacked: map() and the readings throw it).
  // A packed trace is unpacked into a memory file while its bound is at most `unpacked_in_memory_at_most`
  // (unpacking.h), else into a scratch file on disk.
  explicit OpenedTrace(const std::string& path, uint64_t unpacked_in_memory_at_most = Unpacking::kInMemoryAtMost);
  // A memory file (memfd) holding a version-1 trace made in memory (a snapshot's), adopted: closed with this.
  explicit OpenedTrace(int memory_file) : unpacked_(memory_file) {}
  OpenedTrace(const OpenedTrace&) = delete;
  OpenedTrace& operator=(const OpenedTrace&) = delete;
  ~OpenedTrace();

  // A mapping of its own for one reading; it stays valid after the OpenedTrace is gone. A packed trace's once
  // it is unpacked whole: throws OpenError when the unpacking failed.
  std::unique_ptr<MappedFile> map() const;
  // The same, but a packed trace's as far as it is unpacked: a Reader of it waits for more at its end.
  std::unique_ptr<MappedFile> map_as_it_comes() const;

  // The mapping for a single reading, without keeping anything open: a plain trace is mapped once, not
  // once to look at its header and again to read it.
  static std::unique_ptr<MappedFile> map_once(const std::string& path);

 private:
  std::string path_;
  std::shared_ptr<Unpacking> unpacking_;  // a packed trace's, when its size can be bounded
  int unpacked_ = -1;  // the memory file: a packed trace unpacked at once, or a trace made in memory
};

}  // namespace gpumemtrace::trace
