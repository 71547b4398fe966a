// Runs one program and measures it: CPU time of its whole process tree (user + system of the program and
// every descendant it waited for, from wait4), wall time, and memory.
#pragma once

#include <string>
#include <vector>

#include "common/environment.h"

namespace gpumemtrace::bench {

struct Measurement {
  double cpu_seconds = 0;
  double wall_seconds = 0;
  long max_rss_kib = 0;    // the largest resident set of the process tree (ru_maxrss), file pages included
  long peak_anon_kib = 0;  // the largest anonymous resident memory, sampled (only with sample_memory)
};

struct RunOptions {
  EnvChanges env;
  std::string stdout_path = "/dev/null";
  bool sample_memory = false;  // poll /proc/PID/status every few milliseconds for RssAnon
};

// Throws std::runtime_error, with the program's standard error, if it cannot start or does not exit 0.
Measurement run_measured(const std::vector<std::string>& argv, const RunOptions& options = {});

}  // namespace gpumemtrace::bench
