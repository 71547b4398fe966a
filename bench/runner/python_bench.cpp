#include "bench/runner/python_bench.h"

#include <fstream>
#include <stdexcept>

namespace gpumemtrace::bench {

std::optional<PythonInterpreter> find_python(const std::string& python, const std::string& work_dir) {
  if (python.empty()) return std::nullopt;
  std::string out = work_dir + "/python-version.txt";
  RunOptions options;
  options.stdout_path = out;
  try {
    run_measured({python, "-S", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable)"},
                 options);
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
  std::ifstream in(out);
  PythonInterpreter found;
  std::getline(in, found.version);
  std::getline(in, found.executable);
  if (found.version.empty() || found.executable.empty()) return std::nullopt;
  return found;
}

PythonResult run_python_case(const BuildLayout& build, const PythonSettings& settings, unsigned depth) {
  const std::vector<std::string> argv{settings.python, "-S", "-B", build.program("bench_python_workload.py"),
                                      build.sim_dir + "/libcudart.so.13", "--pairs", std::to_string(settings.pairs),
                                      "--depth", std::to_string(depth)};
  const std::string stem = settings.work_dir + "/python-d" + std::to_string(depth);
  const std::string mixed_trace = stem + ".trace", native_trace = stem + "-native.trace";
  auto python_stacks = [&](const std::string& trace, bool on) {
    return traced_env(build, trace, {{"GPUMEMTRACE_PYTHON_STACKS", std::string(on ? "1" : "0")}});
  };
  Variant plain{[&] { return run_measured(argv, {{{"LD_LIBRARY_PATH", build.sim_dir}, {"LD_PRELOAD", std::nullopt}}}); },
                [] { return uint64_t{0}; }, {}};
  Variant mixed{[&] { return run_measured(argv, {python_stacks(mixed_trace, true)}); },
                [&] { return file_size_or_zero(mixed_trace); }, {}};
  Variant native{[&] { return run_measured(argv, {python_stacks(native_trace, false)}); },
                 [&] { return file_size_or_zero(native_trace); }, {}};
  std::vector<ToolRun> runs = run_round_robin({&plain, &mixed, &native}, settings.repeats);
  return PythonResult{depth, 2 * settings.pairs, runs[0], runs[1], runs[2]};
}

}  // namespace gpumemtrace::bench
