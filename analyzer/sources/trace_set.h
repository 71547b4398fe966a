// The traces a path names: a trace file, or a directory of traces (one per rank or process, as
// GPUMEMTRACE_OUTPUT's %r and %p name them). The commands that compare runs (check, baseline, diff)
// take either.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gpumemtrace::sources {

// A path that names no trace: missing, unreadable, or a directory without a trace in it.
class TraceSetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// True when the file starts with the trace magic (trace_format.h), or as a pickle does: a PyTorch memory
// snapshot, read as a trace (trace_source.h).
bool looks_like_trace(const std::string& path);

// The path itself when it is a file (whatever it holds: the reader says what is wrong with it); for a
// directory, every regular file directly in it that looks like a trace, sorted by name, but the PyTorch
// snapshots a trace of it wrote beside itself (TRACE.torch-*.pickle: read with that trace). Throws
// TraceSetError.
std::vector<std::string> trace_paths(const std::string& path);

}  // namespace gpumemtrace::sources
