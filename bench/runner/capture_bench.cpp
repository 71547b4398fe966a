#include "bench/runner/capture_bench.h"

#include <filesystem>

#include "bench/runner/heaptrack_trace.h"
#include "bench/runner/median.h"

namespace gpumemtrace::bench {

uint64_t file_size_or_zero(const std::string& path) {
  std::error_code error;
  auto size = std::filesystem::file_size(path, error);
  return error ? 0 : size;
}

std::vector<ToolRun> run_round_robin(const std::vector<Variant*>& variants, unsigned repeats) {
  for (unsigned r = 0; r < repeats; ++r) {
    for (Variant* variant : variants) variant->samples.push_back(variant->run().cpu_seconds);
  }
  std::vector<ToolRun> out;
  for (Variant* variant : variants) out.push_back(ToolRun{median(variant->samples), variant->trace_bytes()});
  return out;
}

EnvChanges traced_env(const BuildLayout& build, const std::string& trace, EnvChanges extra) {
  extra.emplace("LD_LIBRARY_PATH", build.sim_dir);
  extra["LD_PRELOAD"] = build.tracer();
  extra["GPUMEMTRACE_OUTPUT_ROOT"] = trace;
  extra["GPUMEMTRACE_ROOT_PID"] = std::nullopt;
  return extra;
}

CaptureResult run_capture_case(const BuildLayout& build, const CaptureSettings& settings, const CaptureCase& workload) {
  std::vector<std::string> args{"--shape", workload.shape, "--pairs", std::to_string(settings.pairs),
                                "--depth", std::to_string(settings.depth), "--threads",
                                std::to_string(workload.threads)};
  auto command = [&](const std::string& program) {
    std::vector<std::string> argv{program};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  };
  const std::string cuda = build.program("bench_cuda_workload");
  const std::string host = build.program("bench_malloc_workload");
  const std::string stem = settings.work_dir + "/" + workload.shape + "-t" + std::to_string(workload.threads);
  const std::string trace = stem + ".trace", trace_no_stacks = stem + "-nostacks.trace";
  const std::string heaptrack_stem = stem + ".heaptrack";

  EnvChanges sim{{"LD_LIBRARY_PATH", build.sim_dir}, {"LD_PRELOAD", std::nullopt}};
  auto stacks = [&](const std::string& path, bool on) {
    return traced_env(build, path, {{"GPUMEMTRACE_STACKS", std::string(on ? "1" : "0")}});
  };
  const EnvChanges host_env{{"LD_PRELOAD", std::nullopt}};
  auto none = [] { return uint64_t{0}; };

  Variant cuda_plain{[&] { return run_measured(command(cuda), {sim}); }, none, {}};
  Variant traced{[&] { return run_measured(command(cuda), {stacks(trace, true)}); },
                 [&] { return file_size_or_zero(trace); }, {}};
  Variant traced_no_stacks{[&] { return run_measured(command(cuda), {stacks(trace_no_stacks, false)}); },
                           [&] { return file_size_or_zero(trace_no_stacks); }, {}};
  Variant malloc_plain{[&] { return run_measured(command(host), {host_env}); }, none, {}};
  Variant heaptrack{[&] {
                      std::vector<std::string> argv{settings.heaptrack, "-o", heaptrack_stem};
                      auto rest = command(host);
                      argv.insert(argv.end(), rest.begin(), rest.end());
                      return run_measured(argv, {host_env});
                    },
                    [&] { return file_size_or_zero(heaptrack_trace_path(heaptrack_stem)); }, {}};

  std::vector<Variant*> variants{&cuda_plain, &traced, &traced_no_stacks, &malloc_plain};
  if (!settings.heaptrack.empty()) variants.push_back(&heaptrack);
  std::vector<ToolRun> runs = run_round_robin(variants, settings.repeats);

  CaptureResult result;
  result.workload = workload;
  result.events = 2 * settings.pairs;
  result.cuda_plain = runs[0];
  result.traced = runs[1];
  result.traced_no_stacks = runs[2];
  result.malloc_plain = runs[3];
  if (!settings.heaptrack.empty()) result.heaptrack = runs[4];
  // The finished trace packed (docs/trace-format.md), once: the analyzer's CPU time for it and the size.
  const std::string packed = stem + "-packed.trace";
  std::error_code copy_error;
  if (std::filesystem::copy_file(trace, packed, std::filesystem::copy_options::overwrite_existing, copy_error)) {
    Measurement packing = run_measured({build.program("gpumemtrace"), "pack", packed});
    result.packed = ToolRun{packing.cpu_seconds, file_size_or_zero(packed)};
    std::filesystem::remove(packed, copy_error);
  }
  return result;
}

}  // namespace gpumemtrace::bench
