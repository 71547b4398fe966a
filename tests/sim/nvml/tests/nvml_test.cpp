// The simulated NVML against the simulated driver in the same process: the same devices, and the memory NVML
// reports is what cuMemGetInfo reports, with the listed others and this process (through the state directory).
#include <cuda.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "nvml_api.h"

namespace {

constexpr unsigned long long kMiB = 1ull << 20;

class SimNvml : public testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS); }
  void TearDown() override { EXPECT_EQ(nvmlShutdown(), NVML_SUCCESS); }
  nvmlDevice_t device(unsigned index) {
    nvmlDevice_t handle = nullptr;
    EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(index, &handle), NVML_SUCCESS);
    return handle;
  }
  // pid:bytes of every process on the device, in NVML's order.
  std::string processes(unsigned index) {
    nvmlProcessInfo_t infos[8];
    unsigned count = 8;
    EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(device(index), &count, infos), NVML_SUCCESS);
    std::string out;
    for (unsigned i = 0; i < count; i++) out += std::to_string(infos[i].pid) + ":" + std::to_string(infos[i].usedGpuMemory / kMiB) + "MiB ";
    return out;
  }
};

TEST(SimNvmlSetup, CallsBeforeInitAreUninitialized) {
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
  EXPECT_STREQ(nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized");
}

TEST_F(SimNvml, DevicesAreTheDriversDevices) {
  unsigned count = 0;
  ASSERT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 2u);
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  for (unsigned i = 0; i < count; i++) {
    char name[96], uuid[96];
    ASSERT_EQ(nvmlDeviceGetName(device(i), name, sizeof name), NVML_SUCCESS);
    EXPECT_STREQ(name, "gpumemtrace simulated device");
    ASSERT_EQ(nvmlDeviceGetUUID(device(i), uuid, sizeof uuid), NVML_SUCCESS);
    CUuuid cu{};
    ASSERT_EQ(cuDeviceGetUuid_v2(&cu, static_cast<CUdevice>(i)), CUDA_SUCCESS);
    char expected[64];
    const auto* b = reinterpret_cast<const unsigned char*>(cu.bytes);
    std::snprintf(expected, sizeof expected, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    EXPECT_STREQ(uuid, expected);
    nvmlPciInfo_t pci{};
    ASSERT_EQ(nvmlDeviceGetPciInfo_v3(device(i), &pci), NVML_SUCCESS);
    char cuda_bus[32];
    ASSERT_EQ(cuDeviceGetPCIBusId(cuda_bus, sizeof cuda_bus, static_cast<CUdevice>(i)), CUDA_SUCCESS);
    EXPECT_EQ(std::string(pci.busId), "0000" + std::string(cuda_bus));  // NVML's domain has 8 digits, CUDA's 4
    EXPECT_EQ(pci.bus, i + 1);
  }
  char small[8];
  EXPECT_EQ(nvmlDeviceGetName(device(0), small, sizeof small), NVML_ERROR_INSUFFICIENT_SIZE);
  nvmlDevice_t none = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(2, &none), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(SimNvml, ListedOthersAndThisProcessHoldWhatCuMemGetInfoSays) {
  EXPECT_EQ(processes(0), "4194401:512MiB ");
  EXPECT_EQ(processes(1), "4194402:128MiB ");
  char name[64];
  ASSERT_EQ(nvmlSystemGetProcessName(4194401, name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "python train.py");

  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc_v2(&p, 4 * kMiB), CUDA_SUCCESS);
  EXPECT_EQ(processes(0), "4194401:512MiB " + std::to_string(getpid()) + ":4MiB ");
  nvmlMemory_t memory{};
  ASSERT_EQ(nvmlDeviceGetMemoryInfo(device(0), &memory), NVML_SUCCESS);
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cuMemGetInfo_v2(&free_bytes, &total_bytes), CUDA_SUCCESS);
  EXPECT_EQ(memory.total, 1024 * kMiB);
  EXPECT_EQ(memory.free, 508 * kMiB);
  EXPECT_EQ(memory.used, 516 * kMiB);
  EXPECT_EQ(memory.free, free_bytes);
  EXPECT_EQ(memory.total, total_bytes);

  // The count-only query, then a list too short.
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(device(0), &count, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 2u);
  ASSERT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  EXPECT_EQ(processes(0), "4194401:512MiB ");
  ASSERT_EQ(cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS);
}

// What PyTorch 2.14.1 binds by name and asserts it finds (c10/cuda/driver_api.h): its out-of-memory
// message finds the device by the runtime's PCI bus id and lists its processes in the legacy layout.
TEST_F(SimNvml, WhatPytorchBindsIsThere) {
  nvmlDevice_t by_bus = nullptr;
  ASSERT_EQ(nvmlDeviceGetHandleByPciBusId_v2("0000:02:00.0", &by_bus), NVML_SUCCESS);  // cudaDeviceGetPCIBusId's form
  EXPECT_EQ(by_bus, device(1));
  ASSERT_EQ(nvmlDeviceGetHandleByPciBusId_v2("00000000:01:00.0", &by_bus), NVML_SUCCESS);
  EXPECT_EQ(by_bus, device(0));
  EXPECT_EQ(nvmlDeviceGetHandleByPciBusId_v2("0000:09:00.0", &by_bus), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(nvmlDeviceGetHandleByPciBusId_v2("not a bus id", &by_bus), NVML_ERROR_INVALID_ARGUMENT);

  nvmlProcessInfo_v1_t legacy[4];
  unsigned count = 4;
  ASSERT_EQ(nvmlDeviceGetComputeRunningProcesses(device(0), &count, legacy), NVML_SUCCESS);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(legacy[0].pid, 4194401u);
  EXPECT_EQ(legacy[0].usedGpuMemory, 512 * kMiB);

  int version = 0;
  ASSERT_EQ(nvmlSystemGetCudaDriverVersion_v2(&version), NVML_SUCCESS);
  int v1 = 0;
  ASSERT_EQ(nvmlSystemGetCudaDriverVersion(&v1), NVML_SUCCESS);
  EXPECT_EQ(version, v1);
  EXPECT_EQ(nvmlDeviceGetNvLinkRemoteDeviceType(device(0), 0, nullptr), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceGetNvLinkRemotePciInfo_v2(device(0), 0, nullptr), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceGetGpuFabricInfoV(device(0), nullptr), NVML_ERROR_NOT_SUPPORTED);
}

}  // namespace

int main(int argc, char** argv) {
  char dir[] = "/tmp/gmt-sim-nvml-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("GPUMEMTRACE_SIM_STATE_DIR", dir, 1);
  setenv("GPUMEMTRACE_SIM_DEVICES", "2", 1);
  setenv("GPUMEMTRACE_SIM_MEMORY", "1GiB", 1);
  setenv("GPUMEMTRACE_SIM_OTHERS_MEMORY", "4194401:python train.py:512MiB,4194402:stale worker:128MiB:1", 1);
  testing::InitGoogleTest(&argc, argv);
  int status = RUN_ALL_TESTS();
  std::remove((std::string(dir) + "/sim-" + std::to_string(getpid())).c_str());
  rmdir(dir);
  return status;
}
