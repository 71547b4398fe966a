// Initialization, devices, primary contexts, the context stack, streams, events and error strings.
#include <cstring>
#include <string>
#include <thread>

#include "sim_test.h"

namespace gpumemtrace::sim::test {
namespace {

using DeviceTest = SimTest;

TEST_F(DeviceTest, VersionCountNameAndTotalMemory) {
  int version = 0, count = 0;
  ASSERT_CU(cuDriverGetVersion(&version));
  EXPECT_EQ(version, 13000);
  ASSERT_CU(cuDeviceGetCount(&count));
  EXPECT_EQ(count, kDevices);
  CUdevice dev = -1;
  ASSERT_CU(cuDeviceGet(&dev, 1));
  EXPECT_EQ(dev, 1);
  EXPECT_EQ(cuDeviceGet(&dev, kDevices), CUDA_ERROR_INVALID_DEVICE);
  char name[64];
  ASSERT_CU(cuDeviceGetName(name, sizeof name, 0));
  EXPECT_STREQ(name, "gpumemtrace simulated device");
  EXPECT_EQ(cuInit(1), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(DeviceTest, UuidIsDeterministicAndPerDevice) {
  CUuuid a{}, b{}, again{};
  ASSERT_CU(cuDeviceGetUuid(&a, 0));
  ASSERT_CU(cuDeviceGetUuid(&b, 1));
  ASSERT_CU(cuDeviceGetUuid(&again, 0));
  EXPECT_EQ(std::memcmp(a.bytes, again.bytes, 16), 0);
  EXPECT_NE(std::memcmp(a.bytes, b.bytes, 16), 0);
}

TEST_F(DeviceTest, Attributes) {
  auto attr = [](CUdevice_attribute a, CUdevice d = 0) {
    int v = -12345;
    EXPECT_CU(cuDeviceGetAttribute(&v, a, d));
    return v;
  };
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), 9);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR), 0);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE), 32);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), 132);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED), 1);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED), 1);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING), 1);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS), 1);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 1), 2);
  EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_INTEGRATED), 0);
  int v = 0;
  EXPECT_EQ(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(0), 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 5), CUDA_ERROR_INVALID_DEVICE);
}

TEST_F(DeviceTest, PciBusIdRoundTrips) {
  char id[32];
  ASSERT_CU(cuDeviceGetPCIBusId(id, sizeof id, 1));
  EXPECT_STREQ(id, "0000:02:00.0");
  CUdevice dev = -1;
  ASSERT_CU(cuDeviceGetByPCIBusId(&dev, "0000:02:00.0"));
  EXPECT_EQ(dev, 1);
  ASSERT_CU(cuDeviceGetByPCIBusId(&dev, "01:00.0"));
  EXPECT_EQ(dev, 0);
  EXPECT_EQ(cuDeviceGetByPCIBusId(&dev, "0000:09:00.0"), CUDA_ERROR_INVALID_DEVICE);
}

TEST_F(DeviceTest, PrimaryContextState) {
  unsigned int flags = 99;
  int active = -1;
  ASSERT_CU(cuDevicePrimaryCtxGetState(1, &flags, &active));
  EXPECT_EQ(active, 0);
  CUcontext ctx = nullptr, again = nullptr;
  ASSERT_CU(cuDevicePrimaryCtxRetain(&ctx, 1));
  ASSERT_CU(cuDevicePrimaryCtxRetain(&again, 1));
  EXPECT_EQ(ctx, again);
  ASSERT_CU(cuDevicePrimaryCtxSetFlags(1, CU_CTX_SCHED_BLOCKING_SYNC));
  ASSERT_CU(cuDevicePrimaryCtxGetState(1, &flags, &active));
  EXPECT_EQ(active, 1);
  EXPECT_EQ(flags, unsigned{CU_CTX_SCHED_BLOCKING_SYNC});
  ASSERT_CU(cuDevicePrimaryCtxRelease(1));
  ASSERT_CU(cuDevicePrimaryCtxRelease(1));
  ASSERT_CU(cuDevicePrimaryCtxGetState(1, &flags, &active));
  EXPECT_EQ(active, 0);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(1), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_CU(cuDevicePrimaryCtxSetFlags(1, 0));
}

TEST_F(DeviceTest, ContextStack) {
  CUcontext current = nullptr;
  ASSERT_CU(cuCtxGetCurrent(&current));
  EXPECT_EQ(current, ctx_);
  CUcontext created = nullptr;
  ASSERT_CU(cuCtxCreate(&created, nullptr, 0, 1));  // becomes current
  ASSERT_CU(cuCtxGetCurrent(&current));
  EXPECT_EQ(current, created);
  CUdevice dev = -1;
  ASSERT_CU(cuCtxGetDevice(&dev));
  EXPECT_EQ(dev, 1);
  ASSERT_CU(cuCtxGetDevice_v2(&dev, ctx_));
  EXPECT_EQ(dev, 0);
  ASSERT_CU(cuCtxSynchronize_v2(created));
  CUcontext popped = nullptr;
  ASSERT_CU(cuCtxPopCurrent(&popped));
  EXPECT_EQ(popped, created);
  ASSERT_CU(cuCtxGetCurrent(&current));
  EXPECT_EQ(current, ctx_);
  ASSERT_CU(cuCtxPushCurrent(created));
  ASSERT_CU(cuCtxDestroy(created));  // also leaves the stack
  ASSERT_CU(cuCtxGetCurrent(&current));
  EXPECT_EQ(current, ctx_);
  EXPECT_EQ(cuCtxPushCurrent(created), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuCtxDestroy(ctx_), CUDA_ERROR_INVALID_CONTEXT);  // a primary context is released, not destroyed
  // Another thread starts with no context.
  std::thread([] {
    CUcontext c = reinterpret_cast<CUcontext>(1);
    EXPECT_CU(cuCtxGetCurrent(&c));
    EXPECT_EQ(c, nullptr);
    CUdevice d;
    EXPECT_EQ(cuCtxGetDevice(&d), CUDA_ERROR_INVALID_CONTEXT);
  }).join();
}

TEST_F(DeviceTest, StreamsCompleteImmediately) {
  CUstream s = nullptr;
  ASSERT_CU(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -3));
  unsigned int flags = 0;
  int priority = 0;
  ASSERT_CU(cuStreamGetFlags(s, &flags));
  EXPECT_EQ(flags, unsigned{CU_STREAM_NON_BLOCKING});
  ASSERT_CU(cuStreamGetPriority(s, &priority));
  EXPECT_EQ(priority, -3);
  CUcontext ctx = nullptr;
  ASSERT_CU(cuStreamGetCtx(s, &ctx));
  EXPECT_EQ(ctx, ctx_);
  EXPECT_CU(cuStreamQuery(s));
  EXPECT_CU(cuStreamSynchronize(s));
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  ASSERT_CU(cuStreamIsCapturing(s, &capture));
  EXPECT_EQ(capture, CU_STREAM_CAPTURE_STATUS_NONE);
  int called = 0;
  ASSERT_CU(cuLaunchHostFunc(s, [](void* p) { ++*static_cast<int*>(p); }, &called));
  EXPECT_EQ(called, 1);
  ASSERT_CU(cuStreamDestroy(s));
  EXPECT_EQ(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(DeviceTest, EventsMeasureElapsedTime) {
  CUevent start = nullptr, stop = nullptr, untimed = nullptr;
  ASSERT_CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
  ASSERT_CU(cuEventCreate(&stop, CU_EVENT_BLOCKING_SYNC));
  ASSERT_CU(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
  float ms = -1;
  EXPECT_EQ(cuEventElapsedTime(&ms, start, stop), CUDA_ERROR_INVALID_HANDLE);  // not recorded
  ASSERT_CU(cuEventRecord(start, nullptr));
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_CU(cuEventRecord(stop, nullptr));
  EXPECT_CU(cuEventQuery(stop));
  EXPECT_CU(cuEventSynchronize(stop));
  ASSERT_CU(cuEventElapsedTime(&ms, start, stop));
  EXPECT_GE(ms, 1.5f);
  ASSERT_CU(cuEventRecord(untimed, nullptr));
  EXPECT_EQ(cuEventElapsedTime(&ms, start, untimed), CUDA_ERROR_INVALID_HANDLE);
  for (CUevent e : {start, stop, untimed}) ASSERT_CU(cuEventDestroy(e));
}

TEST(ErrorTest, NamesAndStrings) {
  const char* s = nullptr;
  ASSERT_CU(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s));
  EXPECT_STREQ(s, "CUDA_ERROR_OUT_OF_MEMORY");
  ASSERT_CU(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s));
  EXPECT_STREQ(s, "out of memory");
  ASSERT_CU(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &s));
  EXPECT_STREQ(s, "CUDA_ERROR_ILLEGAL_ADDRESS");
  ASSERT_CU(cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &s));
  EXPECT_STREQ(s, "illegal address");
  EXPECT_EQ(cuGetErrorName(static_cast<CUresult>(12345), &s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGetErrorString(static_cast<CUresult>(12345), &s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(s, nullptr);
}

}  // namespace
}  // namespace gpumemtrace::sim::test
