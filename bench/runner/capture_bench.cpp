#include "bench/runner/capture_bench.h"

#include <filesystem>
#include <functional>

#include "bench/runner/heaptrack_trace.h"
#include "bench/runner/measured_run.h"
#include "bench/runner/median.h"

namespace gpumemtrace::bench {

namespace {

uint64_t file_size_or_zero(const std::string& path) {
  std::error_code error;
  auto size = std::filesystem::file_size(path, error);
  return error ? 0 : size;
}

// One way of running the workload: how to start it, and where its trace lands.
struct Variant {
  std::function<Measurement()> run;
  std::function<uint64_t()> trace_bytes;
  std::vector<double> samples;
};

}  // namespace

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
  auto traced_env = [&](const std::string& path, bool stacks) {
    EnvChanges env = sim;
    env["LD_PRELOAD"] = build.tracer();
    env["GPUMEMTRACE_OUTPUT_ROOT"] = path;
    env["GPUMEMTRACE_ROOT_PID"] = std::nullopt;
    env["GPUMEMTRACE_STACKS"] = std::string(stacks ? "1" : "0");
    return env;
  };
  const EnvChanges host_env{{"LD_PRELOAD", std::nullopt}};
  auto none = [] { return uint64_t{0}; };

  Variant cuda_plain{[&] { return run_measured(command(cuda), {sim}); }, none, {}};
  Variant traced{[&] { return run_measured(command(cuda), {traced_env(trace, true)}); },
                 [&] { return file_size_or_zero(trace); }, {}};
  Variant traced_no_stacks{[&] { return run_measured(command(cuda), {traced_env(trace_no_stacks, false)}); },
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
  // Round robin, so that a slow spell of the machine hits every variant alike.
  for (unsigned r = 0; r < settings.repeats; ++r) {
    for (Variant* variant : variants) variant->samples.push_back(variant->run().cpu_seconds);
  }

  auto summarize = [](Variant& variant) { return ToolRun{median(variant.samples), variant.trace_bytes()}; };
  CaptureResult result;
  result.workload = workload;
  result.events = 2 * settings.pairs;
  result.cuda_plain = summarize(cuda_plain);
  result.traced = summarize(traced);
  result.traced_no_stacks = summarize(traced_no_stacks);
  result.malloc_plain = summarize(malloc_plain);
  if (!settings.heaptrack.empty()) result.heaptrack = summarize(heaptrack);
  return result;
}

}  // namespace gpumemtrace::bench
