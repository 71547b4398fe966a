// A trace file opened once for any number of readings. A packed trace (trace/packed) is unpacked here, once,
// into a memory file holding the version-1 trace it was made from, and every reading maps that copy; any
// other trace is mapped afresh by each reading.
#pragma once

#include <memory>
#include <string>

#include "trace/reader/mapped_file.h"

namespace gpumemtrace::trace {

class TraceFile {
 public:
  // Throws OpenError: unreadable, or a packed trace that is damaged or cannot be unpacked.
  explicit TraceFile(const std::string& path);
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  ~TraceFile();

  // A mapping of its own for one reading; it stays valid after the TraceFile is gone.
  std::unique_ptr<MappedFile> map() const;

 private:
  std::string path_;
  int unpacked_ = -1;  // the memory file of a packed trace
};

}  // namespace gpumemtrace::trace
