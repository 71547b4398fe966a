// The tracer never changes what the program sees: same results, same out-parameters, same output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "tests/support/trace_facts.h"
#include "tests/support/traced_run.h"

namespace gpumemtrace::test {
namespace {

const std::string kNvidiaLib = GPUMEMTRACE_CUDA_LIB_DIR;

ProcessResult run_plain(const std::string& program, EnvChanges env) {
  return run_process({bin_dir() + "/" + program}, env);
}

void expect_same_with_and_without_tracer(const std::string& program, const EnvChanges& env) {
  ProcessResult plain = run_plain(program, env);
  std::string dir = make_temp_dir();
  EnvChanges traced_env = env;
  traced_env["LD_PRELOAD"] = tracer_preload();
  traced_env["GPUMEMTRACE_OUTPUT_ROOT"] = dir + "/root.trace";
  traced_env["GPUMEMTRACE_ROOT_PID"] = std::nullopt;
  ProcessResult traced = run_plain(program, traced_env);
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(traced.exit_code, plain.exit_code);
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.err, plain.err);
  EXPECT_TRUE(read_trace(dir + "/root.trace").complete());
}

TEST(Transparency, SimulatedDevice) {
  expect_same_with_and_without_tracer("capture_prog_api_results", sim_env({{"GPUMEMTRACE_SIM_MEMORY", "1GiB"}}));
}

TEST(Transparency, NvidiaRuntimeWithoutDriver) {
  // NVIDIA's libcudart.so.13 and no libcuda.so.1 anywhere: every call fails, identically.
  expect_same_with_and_without_tracer("capture_prog_api_results", {{"LD_LIBRARY_PATH", kNvidiaLib}});
}

TEST(Transparency, NvidiaRuntimeWithStubDriver) {
  // NVIDIA's stub driver answers the probe with CUDA_ERROR_STUB_LIBRARY: the runtime falls back to dlsym.
  const std::string stub = kNvidiaLib + "/stubs/libcuda.so";
  if (access(stub.c_str(), F_OK) != 0) GTEST_SKIP() << "no " << stub << " (a toolkit from NVIDIA's pip wheels has no stubs)";
  std::string stub_dir = make_temp_dir();
  ASSERT_EQ(symlink(stub.c_str(), (stub_dir + "/libcuda.so.1").c_str()), 0);
  expect_same_with_and_without_tracer("capture_prog_api_results", {{"LD_LIBRARY_PATH", stub_dir + ":" + kNvidiaLib}});
}

TEST(Transparency, UnwritableTraceWarnsOnceAndRunsNormally) {
  EnvChanges env = sim_env();
  ProcessResult plain = run_plain("capture_prog_threads", env);
  env["LD_PRELOAD"] = tracer_preload();
  env["GPUMEMTRACE_OUTPUT_ROOT"] = "/nonexistent-dir/root.trace";
  env["GPUMEMTRACE_OUTPUT"] = "/nonexistent-dir/child.%p.trace";
  env["GPUMEMTRACE_ROOT_PID"] = std::nullopt;
  ProcessResult traced = run_plain("capture_prog_threads", env);
  EXPECT_EQ(traced.exit_code, 0);
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_NE(traced.err.find("cannot write the trace"), std::string::npos) << traced.err;
  EXPECT_EQ(std::count(traced.err.begin(), traced.err.end(), '\n'), 1) << traced.err;
}

TEST(Transparency, FullDiskWarnsOnceAndKeepsWhatWasWritten) {
  // A 10 MiB file system in a private mount namespace: the trace fills it after about 2.5 M events.
  std::string dir = make_temp_dir();
  if (run_process({"unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=10m tmpfs " + dir}).exit_code != 0) {
    GTEST_SKIP() << "no private mounts here (unshare -m / mount tmpfs not permitted)";
  }
  EnvChanges env = sim_env();
  std::string program = bin_dir() + "/capture_prog_threads";
  ProcessResult plain = run_process({program, "1", "1500000"}, env);
  env["GPUMEMTRACE_OUTPUT_ROOT"] = dir + "/root.trace";
  env["GPUMEMTRACE_ROOT_PID"] = std::nullopt;
  // Only the program is traced, not the shell around it.
  std::string script = "mount -t tmpfs -o size=10m tmpfs " + dir + " && LD_PRELOAD=" + tracer_preload() + " " +
                       program + " 1 1500000 && cp " + dir + "/root.trace " + dir + "-full-disk.trace";
  ProcessResult traced = run_process({"unshare", "-m", "sh", "-c", script}, env);
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_NE(traced.err.find("could not be extended"), std::string::npos) << traced.err;
  EXPECT_EQ(std::count(traced.err.begin(), traced.err.end(), '\n'), 1) << traced.err;
  // What was written before the disk filled up is a readable, truncated trace.
  TraceFacts facts = read_trace(dir + "-full-disk.trace");
  EXPECT_EQ(facts.status, trace::Status::Truncated);
  // The 8 MiB the tracer reserved first (the next step does not fit): about 1.1 M events in a plain build,
  // 0.9 M under ASan, where slower events take longer time deltas.
  EXPECT_GT(facts.allocs.size(), 500000u);
  EXPECT_LT(facts.allocs.size(), 1500000u);
  std::remove((dir + "-full-disk.trace").c_str());
}

}  // namespace
}  // namespace gpumemtrace::test
