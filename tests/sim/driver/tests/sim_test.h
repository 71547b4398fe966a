// Shared by the simulated driver's tests: the in-process configuration main() sets, and a fixture that makes
// device 0's primary context current.
#pragma once

#include <gtest/gtest.h>

#include <cuda.h>

#include <cstdint>

namespace gpumemtrace::sim::test {

// The configuration main() puts in the environment before anything calls cuInit.
constexpr int kDevices = 2;
constexpr uint64_t kCapacity = 4ull << 30;                  // GPUMEMTRACE_SIM_MEMORY=4GiB
constexpr uint64_t kOthers[kDevices] = {0, 1ull << 30};     // GPUMEMTRACE_SIM_OTHERS_MEMORY=0,1GiB
constexpr uint64_t MiB = 1ull << 20;

#define ASSERT_CU(expr) ASSERT_EQ((expr), CUDA_SUCCESS) << #expr
#define EXPECT_CU(expr) EXPECT_EQ((expr), CUDA_SUCCESS) << #expr

class SimTest : public ::testing::Test {
 protected:
  void SetUp() override { use_device(0); }
  void TearDown() override {
    cuCtxSetCurrent(nullptr);
    if (ctx_) cuDevicePrimaryCtxRelease(device_);
  }
  void use_device(CUdevice device) {
    ASSERT_CU(cuInit(0));
    if (ctx_) cuDevicePrimaryCtxRelease(device_);
    device_ = device;
    ASSERT_CU(cuDevicePrimaryCtxRetain(&ctx_, device_));
    ASSERT_CU(cuCtxSetCurrent(ctx_));
  }
  // Free memory of the current device, as cuMemGetInfo reports it.
  static uint64_t free_bytes() {
    size_t free = 0, total = 0;
    EXPECT_CU(cuMemGetInfo(&free, &total));
    return free;
  }
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
};

}  // namespace gpumemtrace::sim::test
