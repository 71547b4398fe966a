// The tracer's settings, read once from GPUMEMTRACE_* environment variables (documented in README.md).
#pragma once

#include <cstdint>
#include <string>

#include "common/output_pattern.h"

namespace gpumemtrace::interpose {

struct Config {
  std::string output_pattern = "gpumemtrace-%p.trace";  // GPUMEMTRACE_OUTPUT: %p pid, %h host, %r rank, %%
  std::string output_root;     // GPUMEMTRACE_OUTPUT_ROOT: exact path for the root process
  long root_pid = 0;           // GPUMEMTRACE_ROOT_PID: the top traced process (set by us when absent)
  unsigned stack_depth = 64;   // GPUMEMTRACE_STACK_DEPTH (1..256)
  bool stacks = true;          // GPUMEMTRACE_STACKS=0 turns stack capture off
  bool python_stacks = true;   // GPUMEMTRACE_PYTHON_STACKS=0 keeps stacks native in Python threads
  bool follow_children = true; // GPUMEMTRACE_FOLLOW_CHILDREN=0 traces only the root process
  std::string debug_log;       // GPUMEMTRACE_DEBUG: "1" or "stderr" for stderr, else a file path
  bool cupti = false;          // GPUMEMTRACE_CUPTI=1 adds CUPTI's memory activity (interpose/cupti)
  std::string cupti_path;      // GPUMEMTRACE_CUPTI_PATH: the libcupti.so to load, instead of searching
  bool torch = true;           // GPUMEMTRACE_TORCH=0: no PyTorch hook (interpose/torch)
  uint64_t torch_entries = kDefaultTorchEntries;  // GPUMEMTRACE_TORCH_ENTRIES (1..2^31): PyTorch's history length

  // PyTorch's own example of a bounded history: a few hundred bytes to a few KB of host memory per event.
  static constexpr uint64_t kDefaultTorchEntries = 100000;

  static Config from_environment();
};

using gpumemtrace::current_rank;           // common/output_pattern.h
using gpumemtrace::expand_output_pattern;

}  // namespace gpumemtrace::interpose
