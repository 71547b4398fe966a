// The analyzer benchmark: `gpumemtrace summary` (or `dump` while summary does not exist) on generated
// traces of N events with a constant live set, against heaptrack_print on a heaptrack trace of the malloc
// workload with the same number of events and the same shape; then the same trace packed (`gpumemtrace
// pack`), whose reading unpacks it on a second thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/runner/build_layout.h"

namespace gpumemtrace::bench {

struct AnalyzerSettings {
  unsigned repeats = 3;
  unsigned depth = 20;
  std::string heaptrack;        // empty: leave heaptrack out
  std::string heaptrack_print;
  std::string work_dir;
};

struct AnalysisRun {
  double cpu_seconds = 0;   // median
  double wall_seconds = 0;  // median
  long max_rss_kib = 0;     // largest over the repeats
  long peak_anon_kib = 0;  // largest over the repeats
  uint64_t trace_bytes = 0;

  double events_per_second(uint64_t events) const { return static_cast<double>(events) / cpu_seconds; }
  double events_per_wall_second(uint64_t events) const { return static_cast<double>(events) / wall_seconds; }
};

struct AnalyzerResult {
  uint64_t events = 0;
  AnalysisRun ours;
  std::optional<AnalysisRun> packed;  // ours on the trace packed; none for a build without `pack`
  std::optional<AnalysisRun> heaptrack_print;
};

// "summary" when this build's gpumemtrace has it, else "dump".
std::string analyzer_command(const BuildLayout& build);

AnalyzerResult run_analyzer_case(const BuildLayout& build, const AnalyzerSettings& settings, uint64_t events);

}  // namespace gpumemtrace::bench
