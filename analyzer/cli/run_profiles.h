// The traces a path names, read one at a time (a trace, or a directory of traces: one per rank or
// process), and the run profiles check, baseline and diff compare (analyzer/report/run_profile.h), from
// them or, where the command allows, from a baseline file.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyzer/report/run_profile.h"

namespace gpumemtrace::cli {

// An input that cannot be used: the command prints "gpumemtrace: PATH: REASON" and exits 2.
class InputError : public std::runtime_error {
 public:
  InputError(std::string path, const std::string& reason) : std::runtime_error(reason), path(std::move(path)) {}
  std::string path;
};

// Reads one trace (or snapshot) through the replay, with progress on a terminal, and a warning on stderr for
// each PyTorch snapshot the trace names that cannot be read (it is analyzed without it). Throws
// trace::OpenError.
analysis::Analysis read_trace(const std::string& path, const replay::ReplayOptions& options,
                              const analysis::SourceOptions& source);

using OnTrace = std::function<void(const analysis::Analysis& analysis, const report::SymbolizeStack& symbolize)>;
// A trace of the set that cannot be read: not a trace this build reads, or corrupt.
using OnUnreadable = std::function<void(const std::string& path, const std::string& reason)>;

// Reads each trace `path` names (analyzer/sources/trace_set.h) with read_trace, and calls on_trace or
// on_unreadable. Returns how many traces it named. Throws InputError when the path names no trace.
size_t read_traces(const std::string& path, const replay::ReplayOptions& options,
                   const analysis::SourceOptions& source, const OnTrace& on_trace, const OnUnreadable& on_unreadable);

// One profile per trace, sorted by rank, without the traces report::left_out_of_set leaves out. Throws
// InputError, also for a trace that cannot be read. Profiles count what the driver saw: no PyTorch
// snapshot is joined.
std::vector<report::RunProfile> load_traces(const std::string& path, const replay::ReplayOptions& options = {});

// A baseline file (render/budget/baseline_json.h). Throws InputError.
std::vector<report::RunProfile> load_baseline(const std::string& path);

// A baseline file when `path` is a file that is not a trace, else load_traces. Throws InputError.
std::vector<report::RunProfile> load_runs(const std::string& path);

}  // namespace gpumemtrace::cli
