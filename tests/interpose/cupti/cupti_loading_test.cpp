// The CUPTI backend against NVIDIA's real libcupti.so.13, on a machine with no GPU and no driver: it loads,
// CUPTI refuses to subscribe, and the traced program runs exactly as without CUPTI, with one line on stderr.
// What CUPTI records with a GPU is not testable here (docs/capture.md, "CUPTI").
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

namespace fs = std::filesystem;

const std::string kNvidiaLib = GPUMEMTRACE_CUDA_LIB_DIR;
const std::string kProgram = "capture_prog_api_results";
const std::string kNotUsed = "CUPTI is not used: ";
const std::string kNoSubscription =
    "CUPTI is not used: cuptiSubscribe returned CUPTI_ERROR_UNKNOWN (999) (is there a CUDA driver and a GPU?); "
    "tracing goes on with interposition only\n";
// On the simulated device CUPTI asks the driver for NVIDIA's private interfaces first, which it says once.
const std::string kNoExportTable =
    "gpumemtrace simulated CUDA driver: cuGetExportTable is not supported: NVIDIA's private driver interfaces (which "
    "cuBLAS, cuDNN and NCCL need) are not simulated\n";

// stderr's lines, with the "gpumemtrace[pid]: " prefix taken off the tracer's.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size() - 1;
    std::string line = text.substr(start, end + 1 - start);
    if (line.starts_with("gpumemtrace[")) line = line.substr(line.find("]: ") + 3);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

struct Outcome {
  ProcessResult result;
  TraceFacts trace;
};

Outcome traced(const EnvChanges& env) {
  std::string dir = make_temp_dir();
  EnvChanges full = env;
  full["LD_PRELOAD"] = preload_library();
  full["GPUMEMTRACE_OUTPUT_ROOT"] = dir + "/root.trace";
  full["GPUMEMTRACE_ROOT_PID"] = std::nullopt;
  Outcome outcome{run_process({bin_dir() + "/" + kProgram}, full), {}};
  outcome.trace = read_trace(dir + "/root.trace");
  return outcome;
}

// With CUPTI asked for, the program's output, exit code and trace are those of a run without it; stderr has
// exactly `lines` more, first.
void expect_fails_soft(EnvChanges env, const std::vector<std::string>& lines) {
  ProcessResult plain = run_process({bin_dir() + "/" + kProgram}, env);
  Outcome without = traced(env);
  env["GPUMEMTRACE_CUPTI"] = "1";
  Outcome with = traced(env);
  EXPECT_EQ(with.result.exit_code, plain.exit_code);
  EXPECT_EQ(with.result.out, plain.out);
  std::vector<std::string> expected = lines_of(plain.err);
  expected.insert(expected.begin(), lines.begin(), lines.end());
  EXPECT_EQ(lines_of(with.result.err), expected) << with.result.err;
  EXPECT_EQ(without.result.err, plain.err);
  ASSERT_TRUE(with.trace.complete()) << with.trace.error;
  ASSERT_EQ(with.trace.allocs.size(), without.trace.allocs.size());
  for (size_t i = 0; i < with.trace.allocs.size(); ++i) {
    EXPECT_EQ(with.trace.allocs[i].api, without.trace.allocs[i].api) << i;
    EXPECT_EQ(with.trace.allocs[i].size, without.trace.allocs[i].size) << i;
  }
  EXPECT_EQ(with.trace.frees.size(), without.trace.frees.size());
  EXPECT_EQ(with.trace.failures.size(), without.trace.failures.size());
}

TEST(CuptiLoading, OnTheSimulatedDeviceCuptiRefusesAndTheRunIsUnchanged) {
  expect_fails_soft(sim_env({{"GPUMEMTRACE_SIM_MEMORY", "1GiB"}}), {kNoExportTable, kNoSubscription});
}

TEST(CuptiLoading, WithNvidiasRuntimeAndNoDriverCuptiRefusesAndTheRunIsUnchanged) {
  expect_fails_soft({{"LD_LIBRARY_PATH", kNvidiaLib}}, {kNoSubscription});
}

TEST(CuptiLoading, AnExplicitPathThatDoesNotLoadIsSaidAndNothingElseIsTried) {
  std::string missing = make_temp_dir() + "/libcupti.so.13";
  Outcome with = traced(sim_env({{"GPUMEMTRACE_CUPTI", "1"}, {"GPUMEMTRACE_CUPTI_PATH", missing}}));
  EXPECT_EQ(with.result.exit_code, 0) << with.result.err;
  std::vector<std::string> lines = lines_of(with.result.err);
  ASSERT_EQ(lines.size(), 1u) << with.result.err;
  EXPECT_TRUE(lines[0].starts_with(kNotUsed + "cannot load GPUMEMTRACE_CUPTI_PATH=" + missing + " (" + missing +
                                   ": cannot open shared object file"))
      << lines[0];
  EXPECT_TRUE(lines[0].ends_with("; tracing goes on with interposition only\n")) << lines[0];
  EXPECT_TRUE(with.trace.complete());
}

TEST(CuptiLoading, CudaHomeIsSearchedFirst) {
  std::string home = make_temp_dir();
  fs::create_directories(home + "/lib64");
  fs::create_symlink(kNvidiaLib + "/libcupti.so.13", home + "/lib64/libcupti.so.13");
  std::string log = home + "/debug.log";
  Outcome with = traced(sim_env({{"GPUMEMTRACE_CUPTI", "1"}, {"CUDA_HOME", home}, {"GPUMEMTRACE_DEBUG", log}}));
  EXPECT_EQ(with.result.exit_code, 0) << with.result.err;
  EXPECT_NE(read_file(log).find("CUPTI: loaded " + home + "/lib64/libcupti.so.13\n"), std::string::npos)
      << read_file(log);
  EXPECT_EQ(lines_of(with.result.err), (std::vector<std::string>{kNoExportTable, kNoSubscription}));
}

TEST(CuptiLoading, WithoutTheSwitchCuptiIsNeverLoaded) {
  std::string log = make_temp_dir() + "/debug.log";
  Outcome without = traced(sim_env({{"GPUMEMTRACE_DEBUG", log}}));
  EXPECT_EQ(without.result.err, "");
  EXPECT_EQ(read_file(log).find("CUPTI"), std::string::npos) << read_file(log);
}

TEST(CuptiInjection, InitializeInjectionIsExportedAndFailsSoftWithoutADriver) {
  // What the driver does at cuInit with CUDA_INJECTION64_PATH, done by a probe: no LD_PRELOAD.
  std::string dir = make_temp_dir();
  ProcessResult r = run_process({bin_dir() + "/cupti_inject_probe"},
                                {{"CUDA_INJECTION64_PATH", preload_library()},
                                 {"GPUMEMTRACE_OUTPUT_ROOT", dir + "/root.trace"},
                                 {"GPUMEMTRACE_ROOT_PID", std::nullopt},
                                 {"LD_LIBRARY_PATH", kNvidiaLib}});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "InitializeInjection returned 1\n");
  EXPECT_EQ(lines_of(r.err),
            std::vector<std::string>{"CUPTI is not used: cuptiSubscribe returned CUPTI_ERROR_UNKNOWN (999) (is there a "
                                     "CUDA driver and a GPU?); nothing is recorded through CUDA_INJECTION64_PATH\n"});
}

TEST(CuptiInjection, NvidiasRuntimeWithoutADriverRunsAsBeforeWithTheVariableSet) {
  // Only a real driver loads CUDA_INJECTION64_PATH (at cuInit): here nothing loads the tracer at all.
  EnvChanges env{{"LD_LIBRARY_PATH", kNvidiaLib}};
  ProcessResult plain = run_process({bin_dir() + "/" + kProgram}, env);
  std::string dir = make_temp_dir();
  env["CUDA_INJECTION64_PATH"] = preload_library();
  env["GPUMEMTRACE_OUTPUT_ROOT"] = dir + "/root.trace";
  ProcessResult injected = run_process({bin_dir() + "/" + kProgram}, env);
  EXPECT_EQ(injected.exit_code, plain.exit_code);
  EXPECT_EQ(injected.out, plain.out);
  EXPECT_EQ(injected.err, plain.err);
  EXPECT_FALSE(file_exists(dir + "/root.trace"));
}

}  // namespace
}  // namespace gpumemtrace::test
