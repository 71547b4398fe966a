// The run profiles check, baseline and diff compare (analyzer/report/run_profile.h), from a trace, a
// directory of traces (one per rank or process) or, where the command allows, a baseline file.
#pragma once

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

// One profile per trace, sorted by rank. In a directory of several traces, those that allocated no device
// memory (a launcher, a data loader process) are left out. Throws InputError.
std::vector<report::RunProfile> load_traces(const std::string& path);

// A baseline file (render/baseline_json.h). Throws InputError.
std::vector<report::RunProfile> load_baseline(const std::string& path);

// A baseline file when `path` is a file that is not a trace, else load_traces. Throws InputError.
std::vector<report::RunProfile> load_runs(const std::string& path);

}  // namespace gpumemtrace::cli
