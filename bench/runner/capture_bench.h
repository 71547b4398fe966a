// The capture benchmark: the CUDA workload plain, under libgpumemtrace.so with and without stacks, and the
// malloc workload of the same shape plain and under heaptrack. Reports per-event cost and trace size.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/runner/build_layout.h"
#include "bench/runner/measured_run.h"

namespace gpumemtrace::bench {

struct CaptureCase {
  std::string shape;  // "loop", "loop-sizes" or "mixed" (bench/workload/workload_shape.h)
  unsigned threads = 1;
};

struct CaptureSettings {
  uint64_t pairs = 1'000'000;
  unsigned depth = 20;
  unsigned repeats = 7;
  std::string heaptrack;  // the heaptrack command, empty to leave it out
  std::string work_dir;   // traces go here
};

// Median CPU seconds of the whole process tree, and the size of the trace the last run left.
struct ToolRun {
  double cpu_seconds = 0;
  uint64_t trace_bytes = 0;
};

struct CaptureResult {
  CaptureCase workload;
  uint64_t events = 0;  // allocations + frees
  ToolRun cuda_plain;
  ToolRun traced;           // libgpumemtrace.so, full native stacks
  ToolRun traced_no_stacks; // GPUMEMTRACE_STACKS=0
  ToolRun malloc_plain;
  std::optional<ToolRun> heaptrack;
  std::optional<ToolRun> packed;  // `gpumemtrace pack` of the traced run's trace: its CPU time and the packed size

  // (with tool − without) / events, in nanoseconds.
  double ns_per_event(const ToolRun& with, const ToolRun& without) const {
    return (with.cpu_seconds - without.cpu_seconds) * 1e9 / static_cast<double>(events);
  }
  double traced_ns() const { return ns_per_event(traced, cuda_plain); }
  double traced_no_stacks_ns() const { return ns_per_event(traced_no_stacks, cuda_plain); }
  // Capture and packing together, per event.
  std::optional<double> traced_and_packed_ns() const {
    if (!packed) return std::nullopt;
    return traced_ns() + packed->cpu_seconds * 1e9 / static_cast<double>(events);
  }
  std::optional<double> heaptrack_ns() const {
    if (!heaptrack) return std::nullopt;
    return ns_per_event(*heaptrack, malloc_plain);
  }
};

// One way of running a workload: how to start it, and where its trace lands.
struct Variant {
  std::function<Measurement()> run;
  std::function<uint64_t()> trace_bytes;  // the size of the trace the last run left (0: none)
  std::vector<double> samples;
};

// Runs every variant `repeats` times, round robin, so that a slow spell of the machine hits every variant
// alike. Then each one's median CPU time and trace size, in order.
std::vector<ToolRun> run_round_robin(const std::vector<Variant*>& variants, unsigned repeats);

uint64_t file_size_or_zero(const std::string& path);

// The environment of a run under the tracer (the simulated device's, plus `extra`), writing `trace`.
EnvChanges traced_env(const BuildLayout& build, const std::string& trace, EnvChanges extra = {});

CaptureResult run_capture_case(const BuildLayout& build, const CaptureSettings& settings, const CaptureCase& workload);

}  // namespace gpumemtrace::bench
