// The capture benchmark of a Python program: bench/workload/python_workload.py, cudaMalloc/cudaFree pairs
// through ctypes from a Python stack of a chosen depth, run plain, under libgpumemtrace.so with Python
// frames (mixed stacks), and with GPUMEMTRACE_PYTHON_STACKS=0 (native stacks). Reports per-event cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/runner/build_layout.h"
#include "bench/runner/capture_bench.h"

namespace gpumemtrace::bench {

struct PythonSettings {
  std::string python;  // the interpreter (CPython 3.10 or later for Python frames)
  uint64_t pairs = 250'000;
  unsigned repeats = 7;
  std::string work_dir;
};

struct PythonResult {
  unsigned depth = 0;   // Python frames of the workload's recursion (the script adds its own few)
  uint64_t events = 0;  // allocations + frees
  ToolRun plain;
  ToolRun mixed;        // Python frames spliced into the native stacks
  ToolRun native;       // GPUMEMTRACE_PYTHON_STACKS=0

  double ns_per_event(const ToolRun& with) const {
    return (with.cpu_seconds - plain.cpu_seconds) * 1e9 / static_cast<double>(events);
  }
};

struct PythonInterpreter {
  std::string executable;  // sys.executable: the interpreter itself, not a launcher (a pyenv shim is a script)
  std::string version;     // "3.12.1"
};

// What `python` runs, or nothing when it cannot run (its output goes through a file in work_dir).
std::optional<PythonInterpreter> find_python(const std::string& python, const std::string& work_dir);

PythonResult run_python_case(const BuildLayout& build, const PythonSettings& settings, unsigned depth);

}  // namespace gpumemtrace::bench
