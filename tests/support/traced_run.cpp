#include "tests/support/traced_run.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace gpumemtrace::test {

std::string preload_library() { return lib_dir() + "/libgpumemtrace.so"; }

namespace {

// Every directory a test made, removed when the test program ends.
class TempDirs {
 public:
  ~TempDirs() {
    for (const auto& dir : dirs_) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
  void add(const std::string& dir) { dirs_.push_back(dir); }

 private:
  std::vector<std::string> dirs_;
};
TempDirs g_temp_dirs;

}  // namespace

std::string make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/gpumemtrace-test-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  g_temp_dirs.add(pattern);
  return pattern;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TracedRun run_traced(const std::string& program, const std::vector<std::string>& args, EnvChanges extra) {
  TracedRun run;
  run.dir = make_temp_dir();
  run.trace = run.dir + "/root.trace";
  extra.emplace("LD_PRELOAD", preload_library());
  extra.emplace("GPUMEMTRACE_OUTPUT_ROOT", run.trace);
  extra.emplace("GPUMEMTRACE_OUTPUT", run.dir + "/child.%p.trace");
  extra.emplace("GPUMEMTRACE_ROOT_PID", std::nullopt);
  std::vector<std::string> argv{program.front() == '/' ? program : bin_dir() + "/" + program};
  argv.insert(argv.end(), args.begin(), args.end());
  run.result = run_process(argv, sim_env(std::move(extra)));
  return run;
}

}  // namespace gpumemtrace::test
