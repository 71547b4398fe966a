// Runs a program the way a user would, with a chosen environment, and collects what it did.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"

namespace gpumemtrace::test {

struct ProcessResult {
  int exit_code = -1;    // valid when term_signal == 0
  int term_signal = 0;   // the signal that ended it, or 0
  uint64_t max_rss_kib = 0;  // its largest resident set
  std::string out;
  std::string err;
};

// Environment changes on top of the test's own environment: a value sets, nullopt removes.
using EnvChanges = gpumemtrace::EnvChanges;

ProcessResult run_process(const std::vector<std::string>& argv, const EnvChanges& env = {});
// Runs the analyzer (analyzer_path()) with `args`.
ProcessResult run_gpumemtrace(const std::vector<std::string>& args, const EnvChanges& env = {});

// The environment that puts the simulated device (build/lib/sim) first on the library path.
EnvChanges sim_env(EnvChanges extra = {});

// Where the build put things (absolute paths, baked in by tests/CMakeLists.txt).
std::string bin_dir();        // build/bin
// The analyzer the tests run: this build's bin/gpumemtrace, or the one GPUMEMTRACE_TEST_ANALYZER names.
std::string analyzer_path();
std::string lib_dir();        // build/lib
std::string sim_dir();        // build/lib/sim
std::string test_data_dir();  // tests/data in the source tree

std::string read_file(const std::string& path);

}  // namespace gpumemtrace::test
