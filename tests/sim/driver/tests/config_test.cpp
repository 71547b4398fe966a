// Configuration by environment, read at cuInit: each case runs sim_driver_probe in a child process.
#include <string>

#include "sim_test.h"
#include "tests/support/subprocess.h"

namespace gpumemtrace::sim::test {
namespace {

using gpumemtrace::test::EnvChanges;

gpumemtrace::test::ProcessResult probe(EnvChanges env) {
  for (const char* var : {"GPUMEMTRACE_SIM_DEVICES", "GPUMEMTRACE_SIM_MEMORY", "GPUMEMTRACE_SIM_OTHERS_MEMORY"})
    env.try_emplace(var, std::nullopt);
  return gpumemtrace::test::run_process({gpumemtrace::test::bin_dir() + "/sim_driver_probe"},
                                        gpumemtrace::test::sim_env(env));
}

struct GoodConfig {
  EnvChanges env;
  std::string out;
};

TEST(ConfigTest, DevicesMemoryAndOthers) {
  const GoodConfig cases[] = {
      {{}, "init=0 devices=1\ndevice 0 free=17179869184 total=17179869184\n"},  // defaults: one 16 GiB device
      {{{"GPUMEMTRACE_SIM_DEVICES", "3"},
        {"GPUMEMTRACE_SIM_MEMORY", "80GiB"},
        {"GPUMEMTRACE_SIM_OTHERS_MEMORY", "1GiB,0,512MiB"}},
       "init=0 devices=3\n"
       "device 0 free=84825604096 total=85899345920\n"
       "device 1 free=85899345920 total=85899345920\n"
       "device 2 free=85362475008 total=85899345920\n"},
      // One size for others' memory applies to every device.
      {{{"GPUMEMTRACE_SIM_DEVICES", "2"}, {"GPUMEMTRACE_SIM_MEMORY", "1GiB"}, {"GPUMEMTRACE_SIM_OTHERS_MEMORY", "256MiB"}},
       "init=0 devices=2\ndevice 0 free=805306368 total=1073741824\ndevice 1 free=805306368 total=1073741824\n"},
      // Processes (pid:command:bytes[:device]): each device holds the sum of its own.
      {{{"GPUMEMTRACE_SIM_DEVICES", "2"},
        {"GPUMEMTRACE_SIM_MEMORY", "1GiB"},
        {"GPUMEMTRACE_SIM_OTHERS_MEMORY", "4194401:python train.py:512MiB,4194402:stale worker:128MiB,9:x:64MiB:1"}},
       "init=0 devices=2\ndevice 0 free=402653184 total=1073741824\ndevice 1 free=1006632960 total=1073741824\n"},
      {{{"GPUMEMTRACE_SIM_DEVICES", "0"}}, "init=100 devices=0\n"},  // CUDA_ERROR_NO_DEVICE
  };
  for (const GoodConfig& c : cases) {
    auto r = probe(c.env);
    SCOPED_TRACE(c.out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, c.out);
    EXPECT_EQ(r.err, "");
  }
}

TEST(ConfigTest, BadValuesFailCuInitWithOneMessage) {
  const EnvChanges bad[] = {
      {{"GPUMEMTRACE_SIM_DEVICES", "17"}},
      {{"GPUMEMTRACE_SIM_DEVICES", "two"}},
      {{"GPUMEMTRACE_SIM_MEMORY", "lots"}},
      {{"GPUMEMTRACE_SIM_MEMORY", "2TiB"}},
      {{"GPUMEMTRACE_SIM_OTHERS_MEMORY", "1GiB,1GiB"}},       // one device, two sizes
      {{"GPUMEMTRACE_SIM_OTHERS_MEMORY", "32GiB"}},           // more than the device has
      {{"GPUMEMTRACE_SIM_OTHERS_MEMORY", "1GiB,"}},
      {{"GPUMEMTRACE_SIM_OTHERS_MEMORY", "42:python:1GiB,512MiB"}},  // processes and sizes mixed
      {{"GPUMEMTRACE_SIM_OTHERS_MEMORY", "0:python:1GiB"}},          // no pid 0
      {{"GPUMEMTRACE_SIM_OTHERS_MEMORY", "42::1GiB"}},               // no command
      {{"GPUMEMTRACE_SIM_OTHERS_MEMORY", "42:python:1GiB:1"}},       // one device only
      {{"GPUMEMTRACE_SIM_OTHERS_MEMORY", "42:a:10GiB,43:b:7GiB"}},   // 17 GiB on a 16 GiB device
  };
  for (const auto& env : bad) {
    auto r = probe(env);
    SCOPED_TRACE(env.begin()->first + "=" + *env.begin()->second);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "init=1 devices=0\n");  // CUDA_ERROR_INVALID_VALUE
    EXPECT_NE(r.err.find(env.begin()->first), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace gpumemtrace::sim::test
