#include "tests/support/traced_run.h"

#include <sys/stat.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/temp_files.h"

namespace gpumemtrace::test {

std::string preload_library() { return lib_dir() + "/libgpumemtrace.so"; }

std::string tracer_preload() {
  std::string runtime = GPUMEMTRACE_TEST_SANITIZER_RUNTIME;
  return runtime.empty() ? preload_library() : runtime + ":" + preload_library();
}

std::string make_temp_dir() {
  // Kept until the test program ends, then removed with everything in it. Tests trace several ranks at once,
  // each from a thread of its own.
  static std::mutex lock;
  static std::vector<std::unique_ptr<ScratchDir>> dirs;
  auto dir = std::make_unique<ScratchDir>();
  std::string path = dir->path();
  std::lock_guard<std::mutex> hold(lock);
  dirs.push_back(std::move(dir));
  return path;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TracedRun run_traced(const std::string& program, const std::vector<std::string>& args, EnvChanges extra) {
  TracedRun run;
  run.dir = make_temp_dir();
  run.trace = run.dir + "/root.trace";
  extra.emplace("LD_PRELOAD", tracer_preload());
  extra.emplace("GPUMEMTRACE_OUTPUT_ROOT", run.trace);
  extra.emplace("GPUMEMTRACE_OUTPUT", run.dir + "/child.%p.trace");
  extra.emplace("GPUMEMTRACE_ROOT_PID", std::nullopt);
  std::vector<std::string> argv{program.front() == '/' ? program : bin_dir() + "/" + program};
  argv.insert(argv.end(), args.begin(), args.end());
  run.result = run_process(argv, sim_env(std::move(extra)));
  return run;
}

}  // namespace gpumemtrace::test
