// Runs a test program under libgpumemtrace.so on the simulated device, each run in a fresh directory.
#pragma once

#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace gpumemtrace::test {

struct TracedRun {
  ProcessResult result;
  std::string dir;    // fresh directory holding the traces
  std::string trace;  // the root process's trace: dir/root.trace
};

// `program` is a name in build/bin or an absolute path. Children's traces go to dir/child.<pid>.trace.
TracedRun run_traced(const std::string& program, const std::vector<std::string>& args = {}, EnvChanges extra = {});

std::string preload_library();
// What LD_PRELOAD holds to trace a program: the tracer, preceded in sanitizer builds by the sanitizer's runtime,
// which must be the first library of a process (the programs run here may not be instrumented).
std::string tracer_preload();
std::string make_temp_dir();
bool file_exists(const std::string& path);

}  // namespace gpumemtrace::test
