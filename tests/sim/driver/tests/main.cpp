// The in-process tests run with one fixed configuration (sim_test.h), whether CTest runs them one by one or the
// binary runs them all: environment variables the developer may have set are replaced.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("GPUMEMTRACE_SIM_DEVICES", "2", 1);
  setenv("GPUMEMTRACE_SIM_MEMORY", "4GiB", 1);
  setenv("GPUMEMTRACE_SIM_OTHERS_MEMORY", "0,1GiB", 1);
  unsetenv("GPUMEMTRACE_SIM_LOOKUP_LOG");
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
