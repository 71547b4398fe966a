// Real PyTorch under the tracer, for the tests of tests/pytorch: the venv's Python with torch 2.14.1, the skip (or
// the failure in CI) without it, and `gpumemtrace run --sim-memory M -- python script.py` with what it printed.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/size_units.h"
#include "tests/support/subprocess.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {


// The venv's Python when it has torch 2.14.1; else empty, with why.
inline const std::string& torch_python(std::string* why) {
  static std::string reason;
  static const std::string python = [] {
    const char* env = std::getenv("GPUMEMTRACE_VENV");
    std::string venv = env != nullptr && *env != '\0' ? env : GMT_DEFAULT_VENV;
    std::string candidate = venv + "/bin/python";
    if (!file_exists(candidate)) {
      reason = "no " + candidate + ": scripts/setup_pytorch.sh installs PyTorch there (GPUMEMTRACE_VENV)";
      return std::string();
    }
    ProcessResult r =
        run_process({candidate, "-c", "import importlib.metadata as m; print(m.version('torch'), end='')"});
    if (r.exit_code != 0 || r.out != "2.14.1") {
      reason = candidate + " has no torch 2.14.1 (" + (r.exit_code == 0 ? r.out : r.err) + ")";
      return std::string();
    }
    return candidate;
  }();
  *why = reason;
  return python;
}

// Without torch: a visible skip, or a failure in CI.
#define REQUIRE_TORCH()                                                     \
  do {                                                                      \
    std::string why_;                                                       \
    if (torch_python(&why_).empty()) {                                      \
      const char* ci_ = std::getenv("CI");                                  \
      if (ci_ != nullptr && std::string(ci_) == "true") FAIL() << why_;     \
      GTEST_SKIP() << why_;                                                 \
    }                                                                       \
  } while (0)

struct TorchRun {
  ProcessResult result;
  std::string dir;
  std::string trace;                       // dir/root.trace
  std::map<std::string, nlohmann::json> steps;   // allocator_sequence.py's figures by step
  std::map<std::string, nlohmann::json> checks;  // and its checks
  std::vector<nlohmann::json> objects;     // every JSON line of stdout
};

// `gpumemtrace run --sim-memory <memory> -o dir/root.trace -- python -W ignore <script> <args>`.
inline TorchRun run_torch(const std::string& script, const std::vector<std::string>& args, const std::string& memory,
                   EnvChanges env = {}) {
  std::string why;
  TorchRun run;
  run.dir = make_temp_dir();
  run.trace = run.dir + "/root.trace";
  std::vector<std::string> argv = {"run", "--sim-memory", memory, "-o", run.trace, "--", torch_python(&why),
                                   "-W", "ignore", script};
  argv.insert(argv.end(), args.begin(), args.end());
  env.emplace("PYTHONDONTWRITEBYTECODE", "1");
  run.result = run_gpumemtrace(argv, env);
  std::istringstream lines(run.result.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("{")) continue;
    nlohmann::json object = nlohmann::json::parse(line);
    if (object.contains("step")) run.steps[object["step"]] = object;
    if (object.contains("check")) run.checks[object["check"]] = object["value"];
    run.objects.push_back(object);
  }
  return run;
}

inline nlohmann::json report(const std::vector<std::string>& args) {
  ProcessResult r = run_gpumemtrace(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

inline std::string describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n" + r.out + r.err;
}

}  // namespace gpumemtrace::test
