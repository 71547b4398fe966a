#include "bench/runner/analyzer_bench.h"

#include <filesystem>
#include <stdexcept>

#include "bench/runner/heaptrack_trace.h"
#include "bench/runner/measured_run.h"
#include "bench/runner/median.h"

namespace gpumemtrace::bench {

namespace {

// Runs `argv` `repeats` times with memory sampling; the median CPU time and the largest memory.
AnalysisRun measure_analysis(const std::vector<std::string>& argv, unsigned repeats) {
  AnalysisRun run;
  std::vector<double> cpu, wall;
  RunOptions options;
  options.sample_memory = true;
  for (unsigned r = 0; r < repeats; ++r) {
    Measurement m = run_measured(argv, options);
    cpu.push_back(m.cpu_seconds);
    wall.push_back(m.wall_seconds);
    run.max_rss_kib = std::max(run.max_rss_kib, m.max_rss_kib);
    run.peak_anon_kib = std::max(run.peak_anon_kib, m.peak_anon_kib);
  }
  run.cpu_seconds = median(cpu);
  run.wall_seconds = median(wall);
  return run;
}

}  // namespace

std::string analyzer_command(const BuildLayout& build) {
  try {
    run_measured({build.program("gpumemtrace"), "summary", "--help"});
    return "summary";
  } catch (const std::runtime_error&) {
    return "dump";
  }
}

AnalyzerResult run_analyzer_case(const BuildLayout& build, const AnalyzerSettings& settings, uint64_t events) {
  AnalyzerResult result;
  result.events = events;
  const std::string count = std::to_string(events);

  const std::string trace = settings.work_dir + "/generated-" + count + ".trace";
  run_measured({build.program("bench_trace_generator"), trace, count});
  const std::vector<std::string> analyze = {build.program("gpumemtrace"), analyzer_command(build), trace};
  result.ours = measure_analysis(analyze, settings.repeats);
  result.ours.trace_bytes = std::filesystem::file_size(trace);
  bool packs = true;
  try {
    run_measured({build.program("gpumemtrace"), "pack", "--help"});
  } catch (const std::runtime_error&) {
    packs = false;  // a build from before packed traces
  }
  if (packs) {
    run_measured({build.program("gpumemtrace"), "pack", trace});
    result.packed = measure_analysis(analyze, settings.repeats);
    result.packed->trace_bytes = std::filesystem::file_size(trace);
  }
  std::filesystem::remove(trace);

  if (settings.heaptrack.empty()) return result;
  // The malloc workload's mixed shape makes 2 events per pair.
  const std::string stem = settings.work_dir + "/analyzer-" + count + ".heaptrack";
  run_measured({settings.heaptrack, "-o", stem, build.program("bench_malloc_workload"), "--shape", "mixed",
                "--pairs", std::to_string(events / 2), "--depth", std::to_string(settings.depth)},
               {EnvChanges{{"LD_PRELOAD", std::nullopt}}});
  const std::string heaptrack_trace = heaptrack_trace_path(stem);
  if (heaptrack_trace.empty()) throw std::runtime_error("heaptrack wrote no trace at " + stem + ".zst");
  result.heaptrack_print = measure_analysis({settings.heaptrack_print, "-f", heaptrack_trace}, settings.repeats);
  result.heaptrack_print->trace_bytes = std::filesystem::file_size(heaptrack_trace);
  std::filesystem::remove(heaptrack_trace);
  return result;
}

}  // namespace gpumemtrace::bench
