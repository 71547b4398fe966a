// Unit-level checks of the CUDA runtime API, one mode per run (linked against NVIDIA's libcudart.so, so it runs on
// whichever libcudart.so.13 LD_LIBRARY_PATH finds first). Output format: checks.h.
//
// usage: sim_prog_runtime_checks MODE
//   probe       what a sequence of basic calls returns (no device needed; compared with NVIDIA's runtime)
//   errors      code<TAB>name<TAB>string for every recognized cudaError_t and two unrecognized ones
//   lasterror   per-thread last error: set by failures, kept by successes, cleared by cudaGetLastError
//   devices     per-thread current device, properties and attributes, per-device memory (2 devices)
//   memory      every allocation API, pointer attributes, memcpy/memset round trips, free memory after each
//   pools       explicit pools through cudaMemPool*, the device's default/current pool
//   streams     streams and events
//   entrypoint  cudaGetDriverEntryPoint[ByVersion] against the driver's own exports
//   kernels     kernel registration and launch, the calls PyTorch makes around them (runtime_checks_kernels.cpp)
//   ptds        the same calls as built with --default-stream per-thread (the _ptsz/_ptds exports)
//   threads     8 threads whose first CUDA call races the runtime's initialization
//   reset       cudaDeviceReset and use afterwards
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "checks.h"

using namespace checks;

// The deprecated cudaGetDriverEntryPoint is part of what we check.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

constexpr size_t kMiB = 1 << 20;

cudaExtent extent(size_t w, size_t h, size_t d) { return cudaExtent{w, h, d}; }

size_t free_memory(const char* step) {
  size_t free_bytes = 0, total_bytes = 0;
  expect("cudaMemGetInfo", cudaMemGetInfo(&free_bytes, &total_bytes));
  std::printf("value free.%s=%zu\n", step, free_bytes);
  return free_bytes;
}

// Each call is made before its outputs are printed (argument evaluation order is unspecified).
void probe() {
  value("peek", cudaPeekAtLastError());
  int version = -1;
  cudaError_t e = cudaDriverGetVersion(&version);
  std::printf("call=cudaDriverGetVersion result=%d version=%d\n", e, version);
  e = cudaRuntimeGetVersion(&version);
  std::printf("call=cudaRuntimeGetVersion result=%d version=%d\n", e, version);
  int count = -1;
  e = cudaGetDeviceCount(&count);
  std::printf("call=cudaGetDeviceCount result=%d count=%d\n", e, count);
  value("last", cudaGetLastError());
  value("last_again", cudaGetLastError());
  int device = -1;
  e = cudaGetDevice(&device);
  std::printf("call=cudaGetDevice result=%d device=%d\n", e, device);
  std::printf("call=cudaSetDevice result=%d\n", cudaSetDevice(0));
  void* p = nullptr;
  e = cudaMalloc(&p, 1024);
  std::printf("call=cudaMalloc result=%d null=%d\n", e, p == nullptr);
  std::printf("call=cudaFree(0) result=%d\n", cudaFree(nullptr));
  size_t free_bytes = 7, total_bytes = 7;
  e = cudaMemGetInfo(&free_bytes, &total_bytes);
  std::printf("call=cudaMemGetInfo result=%d free=%zu total=%zu\n", e, free_bytes, total_bytes);
  std::printf("call=cudaMallocAsync result=%d\n", cudaMallocAsync(&p, 1024, nullptr));
  std::printf("call=cudaMallocHost result=%d\n", cudaMallocHost(&p, 1024));
  cudaStream_t stream = nullptr;
  std::printf("call=cudaStreamCreate result=%d\n", cudaStreamCreate(&stream));
  std::printf("call=cudaDeviceSynchronize result=%d\n", cudaDeviceSynchronize());
  cudaDeviceProp prop;
  std::printf("call=cudaGetDeviceProperties result=%d\n", cudaGetDeviceProperties(&prop, 0));
  int warp = -1;
  e = cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 0);
  std::printf("call=cudaDeviceGetAttribute result=%d value=%d\n", e, warp);
  void* fn = reinterpret_cast<void*>(1);
  // 7 marks a status the runtime left untouched; it is no value of the enum, so it is only copied as bytes
  // (loading it as the enum is undefined behaviour, which UBSan reports).
  int status_bytes = 7;
  cudaDriverEntryPointQueryResult status;
  std::memcpy(&status, &status_bytes, sizeof status);
  e = cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, &status);
  std::memcpy(&status_bytes, &status, sizeof status);
  std::printf("call=cudaGetDriverEntryPointByVersion result=%d untouched=%d status=%d\n", e,
              fn == reinterpret_cast<void*>(1), status_bytes);
  std::printf("call=cudaDeviceReset result=%d\n", cudaDeviceReset());
  value("peek_end", cudaPeekAtLastError());
  value("last_end", cudaGetLastError());
}

void errors() {
  auto row = [](int code) {
    auto e = static_cast<cudaError_t>(code);
    std::printf("%d\t%s\t%s\n", code, cudaGetErrorName(e), cudaGetErrorString(e));
  };
  const std::string unrecognized = "unrecognized error code";
  for (int code = 0; code <= 11000; ++code)
    if (cudaGetErrorName(static_cast<cudaError_t>(code)) != unrecognized) row(code);
  row(-1);
  row(12345);
}

void lasterror() {
  expect("cudaFree(0)", cudaFree(nullptr));
  value("initial", cudaGetLastError());
  expect("cudaSetDevice(99)", cudaSetDevice(99), cudaErrorInvalidDevice);
  value("peek", cudaPeekAtLastError());
  value("peek_again", cudaPeekAtLastError());
  void* p = nullptr;
  expect("cudaMalloc", cudaMalloc(&p, 4096));  // a success does not clear it
  value("last", cudaGetLastError());
  value("cleared", cudaGetLastError());
  void* q = nullptr;
  expect("cudaMalloc(1 PiB)", cudaMalloc(&q, size_t{1} << 50), cudaErrorMemoryAllocation);
  expect("cudaMemcpy(bad kind)", cudaMemcpy(p, p, 16, static_cast<cudaMemcpyKind>(42)),
         cudaErrorInvalidMemcpyDirection);
  value("latest", cudaGetLastError());  // the most recent failure wins
  expect("cudaMalloc(NULL)", cudaMalloc(nullptr, 16), cudaErrorInvalidValue);
  // Last errors are per thread.
  cudaError_t other = cudaErrorUnknown;
  std::thread([&] { other = cudaGetLastError(); }).join();
  value("other_thread", other);
  value("this_thread", cudaGetLastError());
  void* zero = reinterpret_cast<void*>(1);
  expect("cudaMalloc(0)", cudaMalloc(&zero, 0));
  value("malloc0_null", zero == nullptr);
  expect("cudaFree", cudaFree(p));
  int warp = 0;
  expect("cudaDeviceGetAttribute(bad device)", cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 5),
         cudaErrorInvalidDevice);
  value("final", cudaGetLastError());
  std::printf("value name.2=%s\nvalue string.2=%s\n", cudaGetErrorName(cudaErrorMemoryAllocation),
              cudaGetErrorString(cudaErrorMemoryAllocation));
}

void devices() {
  int count = 0;
  expect("cudaGetDeviceCount", cudaGetDeviceCount(&count));
  value("count", count);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    expect("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, d));
    std::printf("device index=%d name=%s total=%zu major=%d minor=%d sms=%d warp=%d max_threads=%d managed=%d "
                "pools=%d unified=%d\n",
                d, prop.name, prop.totalGlobalMem, prop.major, prop.minor, prop.multiProcessorCount, prop.warpSize,
                prop.maxThreadsPerBlock, prop.managedMemory, prop.memoryPoolsSupported, prop.unifiedAddressing);
    int major = -1, sms = -1, warp = -1;
    expect("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
    expect("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    expect("cudaDeviceGetAttribute", cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, d));
    require("attributes_match_properties", major == prop.major && sms == prop.multiProcessorCount &&
                                              warp == prop.warpSize);
  }
  cudaDeviceProp prop{};
  expect("cudaGetDeviceProperties(count)", cudaGetDeviceProperties(&prop, count), cudaErrorInvalidDevice);
  expect("cudaSetDevice(-1)", cudaSetDevice(-1), cudaErrorInvalidDevice);
  cudaGetLastError();

  int device = -1;
  expect("cudaGetDevice", cudaGetDevice(&device));
  value("default_device", device);
  // A device set in one thread is that thread's only.
  int in_thread = -1;
  size_t thread_free = 0, thread_total = 0, thread_free_after = 0;
  std::thread([&] {
    expect("cudaSetDevice(1)", cudaSetDevice(1));
    cudaGetDevice(&in_thread);
    void* p = nullptr;
    cudaMemGetInfo(&thread_free, &thread_total);
    expect("cudaMalloc(device 1)", cudaMalloc(&p, 8 * kMiB));
    cudaMemGetInfo(&thread_free_after, &thread_total);
    expect("cudaFree(device 1)", cudaFree(p));
  }).join();
  value("thread_device", in_thread);
  value("device1_allocated", static_cast<long long>(thread_free - thread_free_after));
  expect("cudaGetDevice", cudaGetDevice(&device));
  value("main_device_after_thread", device);
  size_t before = free_memory("device0_before");
  void* p = nullptr;
  expect("cudaMalloc(device 0)", cudaMalloc(&p, 4 * kMiB));
  value("device0_allocated", static_cast<long long>(before - free_memory("device0_after")));
  expect("cudaSetDevice(1)", cudaSetDevice(1));
  expect("cudaGetDevice", cudaGetDevice(&device));
  value("switched_device", device);
  free_memory("device1_now");
  expect("cudaSetDevice(0)", cudaSetDevice(0));
  expect("cudaFree", cudaFree(p));
  free_memory("device0_end");
}

void pointer_type(const char* what, const void* ptr, cudaMemoryType want) {
  cudaPointerAttributes a{};
  expect("cudaPointerGetAttributes", cudaPointerGetAttributes(&a, ptr));
  std::printf("pointer of=%s type=%d device=%d\n", what, static_cast<int>(a.type), a.device);
  require(what, a.type == want);
}

void memory() {
  size_t start = free_memory("start");
  cudaStream_t stream = nullptr;
  expect("cudaStreamCreate", cudaStreamCreate(&stream));

  void* d = nullptr;
  expect("cudaMalloc", cudaMalloc(&d, kMiB));
  free_memory("cudaMalloc");
  pointer_type("cudaMalloc", d, cudaMemoryTypeDevice);

  void* pitched = nullptr;
  size_t pitch = 0;
  expect("cudaMallocPitch", cudaMallocPitch(&pitched, &pitch, 1000, 10));
  value("pitch", static_cast<long long>(pitch));
  require("pitch_covers_width", pitch >= 1000);
  free_memory("cudaMallocPitch");

  cudaPitchedPtr p3{};
  expect("cudaMalloc3D", cudaMalloc3D(&p3, extent(100, 10, 5)));
  value("pitch3d", static_cast<long long>(p3.pitch));
  require("pitched_ptr_dims", p3.ptr != nullptr && p3.xsize == 100 && p3.ysize == 10 && p3.pitch >= 100);
  free_memory("cudaMalloc3D");

  void* managed = nullptr;
  expect("cudaMallocManaged", cudaMallocManaged(&managed, kMiB, cudaMemAttachGlobal));
  free_memory("cudaMallocManaged");
  pointer_type("cudaMallocManaged", managed, cudaMemoryTypeManaged);

  void* host = nullptr;
  expect("cudaMallocHost", cudaMallocHost(&host, kMiB));
  free_memory("cudaMallocHost");
  pointer_type("cudaMallocHost", host, cudaMemoryTypeHost);
  void* mapped = nullptr;
  expect("cudaHostAlloc", cudaHostAlloc(&mapped, kMiB, cudaHostAllocMapped | cudaHostAllocPortable));
  free_memory("cudaHostAlloc");
  pointer_type("cudaHostAlloc", mapped, cudaMemoryTypeHost);
  std::vector<char> pageable(64);
  pointer_type("pageable", pageable.data(), cudaMemoryTypeUnregistered);

  cudaChannelFormatDesc float4_desc = cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindFloat);
  cudaArray_t array = nullptr;
  expect("cudaMallocArray", cudaMallocArray(&array, &float4_desc, 64, 64));
  free_memory("cudaMallocArray");
  cudaChannelFormatDesc uchar_desc = cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
  cudaArray_t array3d = nullptr;
  expect("cudaMalloc3DArray", cudaMalloc3DArray(&array3d, &uchar_desc, extent(32, 32, 32)));
  free_memory("cudaMalloc3DArray");
  cudaChannelFormatDesc bad_desc = cudaCreateChannelDesc(8, 16, 0, 0, cudaChannelFormatKindUnsigned);
  cudaArray_t bad = nullptr;
  expect("cudaMallocArray(bad desc)", cudaMallocArray(&bad, &bad_desc, 8, 8), cudaErrorInvalidChannelDescriptor);

  // Data survives the round trips, synchronous and in stream order.
  std::vector<unsigned char> out(4096), in(4096, 0);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i * 13 + 1);
  expect("cudaMemcpy(H2D)", cudaMemcpy(d, out.data(), out.size(), cudaMemcpyHostToDevice));
  expect("cudaMemcpy(D2D)", cudaMemcpy(pitched, d, out.size(), cudaMemcpyDeviceToDevice));
  expect("cudaMemcpy(D2H)", cudaMemcpy(in.data(), pitched, in.size(), cudaMemcpyDeviceToHost));
  require("memcpy_round_trip", in == out);
  expect("cudaMemset", cudaMemset(d, 0xab, 100));
  expect("cudaMemcpy(default)", cudaMemcpy(in.data(), d, 200, cudaMemcpyDefault));
  require("memset", in[0] == 0xab && in[99] == 0xab && in[100] == out[100]);
  expect("cudaMemsetAsync", cudaMemsetAsync(managed, 0x11, 64, stream));
  expect("cudaMemcpyAsync", cudaMemcpyAsync(host, managed, 64, cudaMemcpyDefault, stream));
  expect("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  require("async_round_trip", static_cast<unsigned char*>(host)[63] == 0x11);

  expect("cudaFreeArray", cudaFreeArray(array3d));
  expect("cudaFreeArray", cudaFreeArray(array));
  expect("cudaFreeHost", cudaFreeHost(mapped));
  expect("cudaFreeHost", cudaFreeHost(host));
  expect("cudaFree(managed)", cudaFree(managed));
  expect("cudaFree(3D)", cudaFree(p3.ptr));
  expect("cudaFree(pitch)", cudaFree(pitched));
  expect("cudaFree", cudaFree(d));
  expect("cudaStreamDestroy", cudaStreamDestroy(stream));
  require("all_memory_back", free_memory("end") == start);
}

size_t pool_attribute(cudaMemPool_t pool, cudaMemPoolAttr attr, const char* name) {
  uint64_t v = 0;
  expect("cudaMemPoolGetAttribute", cudaMemPoolGetAttribute(pool, attr, &v));
  std::printf("value %s=%llu\n", name, static_cast<unsigned long long>(v));
  return v;
}

void pools() {
  size_t start = free_memory("start");
  cudaMemPool_t default_pool = nullptr, current = nullptr;
  expect("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&default_pool, 0));
  expect("cudaDeviceGetMemPool", cudaDeviceGetMemPool(&current, 0));
  require("current_is_default", default_pool != nullptr && current == default_pool);
  expect("cudaDeviceGetDefaultMemPool(bad device)", cudaDeviceGetDefaultMemPool(&current, 7),
         cudaErrorInvalidDevice);

  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr;
  expect("cudaMemPoolCreate", cudaMemPoolCreate(&pool, &props));
  uint64_t keep = UINT64_MAX;
  expect("cudaMemPoolSetAttribute(threshold)", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  pool_attribute(pool, cudaMemPoolAttrReleaseThreshold, "threshold");

  cudaStream_t stream = nullptr;
  expect("cudaStreamCreate", cudaStreamCreate(&stream));
  void* a = nullptr;
  expect("cudaMallocFromPoolAsync", cudaMallocFromPoolAsync(&a, 3000000, pool, stream));
  expect("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent, "allocated.reserved");
  pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent, "allocated.used");
  free_memory("allocated");
  expect("cudaFreeAsync", cudaFreeAsync(a, stream));
  expect("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent, "freed.reserved");
  pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent, "freed.used");
  pool_attribute(pool, cudaMemPoolAttrReservedMemHigh, "freed.reserved_high");
  pool_attribute(pool, cudaMemPoolAttrUsedMemHigh, "freed.used_high");
  free_memory("freed");
  expect("cudaMemPoolTrimTo", cudaMemPoolTrimTo(pool, 0));
  pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent, "trimmed.reserved");
  free_memory("trimmed");

  // The device's current pool serves cudaMallocAsync.
  expect("cudaDeviceSetMemPool", cudaDeviceSetMemPool(0, pool));
  expect("cudaDeviceGetMemPool", cudaDeviceGetMemPool(&current, 0));
  require("current_is_set_pool", current == pool);
  void* b = nullptr;
  expect("cudaMallocAsync", cudaMallocAsync(&b, kMiB, stream));
  expect("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent, "current.used");
  expect("cudaFreeAsync", cudaFreeAsync(b, stream));
  expect("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  expect("cudaDeviceSetMemPool(default)", cudaDeviceSetMemPool(0, default_pool));
  expect("cudaMemPoolDestroy", cudaMemPoolDestroy(pool));
  expect("cudaStreamDestroy", cudaStreamDestroy(stream));
  require("all_memory_back", free_memory("end") == start);
}

void streams() {
  cudaStream_t plain = nullptr, nonblocking = nullptr, prioritized = nullptr;
  expect("cudaStreamCreate", cudaStreamCreate(&plain));
  expect("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
  expect("cudaStreamCreateWithPriority", cudaStreamCreateWithPriority(&prioritized, cudaStreamDefault, -1));
  cudaEvent_t start = nullptr, stop = nullptr, untimed = nullptr;
  expect("cudaEventCreate", cudaEventCreate(&start));
  expect("cudaEventCreate", cudaEventCreate(&stop));
  expect("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  expect("cudaEventRecord", cudaEventRecord(start, plain));
  void* p = nullptr;
  expect("cudaMallocAsync", cudaMallocAsync(&p, kMiB, nonblocking));
  expect("cudaMemsetAsync", cudaMemsetAsync(p, 0, kMiB, nonblocking));
  expect("cudaFreeAsync", cudaFreeAsync(p, nonblocking));
  expect("cudaEventRecord", cudaEventRecord(untimed, nonblocking));
  expect("cudaEventRecord", cudaEventRecord(stop, prioritized));
  expect("cudaEventSynchronize", cudaEventSynchronize(stop));
  expect("cudaEventQuery", cudaEventQuery(untimed));
  float ms = -1;
  expect("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start, stop));
  require("elapsed_not_negative", ms >= 0);
  expect("cudaStreamQuery", cudaStreamQuery(nonblocking));
  expect("cudaStreamSynchronize", cudaStreamSynchronize(plain));
  expect("cudaStreamSynchronize(legacy)", cudaStreamSynchronize(cudaStreamLegacy));
  expect("cudaStreamSynchronize(per-thread)", cudaStreamSynchronize(cudaStreamPerThread));
  expect("cudaDeviceSynchronize", cudaDeviceSynchronize());
  for (cudaEvent_t e : {start, stop, untimed}) expect("cudaEventDestroy", cudaEventDestroy(e));
  for (cudaStream_t s : {plain, nonblocking, prioritized}) expect("cudaStreamDestroy", cudaStreamDestroy(s));
}

void entry(const char* label, cudaError_t result, void* fn, cudaDriverEntryPointQueryResult status,
           std::initializer_list<const char*> candidates) {
  std::printf("entry of=%s result=%d status=%d resolved=%s\n", label, static_cast<int>(result),
              static_cast<int>(status), driver_symbol(fn, candidates));
}

void entrypoint() {
  expect("cudaFree(0)", cudaFree(nullptr));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  std::initializer_list<const char*> async = {"cuMemAllocAsync", "cuMemAllocAsync_ptsz"};
  cudaError_t r = cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 12000, cudaEnablePerThreadDefaultStream,
                                                   &status);
  entry("ByVersion.cuMemAllocAsync.per_thread", r, fn, status, async);
  r = cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 12000, cudaEnableLegacyStream, &status);
  entry("ByVersion.cuMemAllocAsync.legacy", r, fn, status, async);
  r = cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 12000, cudaEnableDefault, &status);
  entry("ByVersion.cuMemAllocAsync.default", r, fn, status, async);
  r = cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, &status);
  entry("ByVersion.cuMemAlloc", r, fn, status, {"cuMemAlloc", "cuMemAlloc_v2"});
  r = cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 12000, cudaEnableDefault, &status);
  entry("ByVersion.cuMemCreate", r, fn, status, {"cuMemCreate"});
  r = cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &status);
  entry("EntryPoint.cuMemAlloc", r, fn, status, {"cuMemAlloc", "cuMemAlloc_v2"});
  r = cudaGetDriverEntryPoint("cuMemFreeAsync", &fn, cudaEnablePerThreadDefaultStream, &status);
  entry("EntryPoint.cuMemFreeAsync.per_thread", r, fn, status, {"cuMemFreeAsync", "cuMemFreeAsync_ptsz"});
  fn = reinterpret_cast<void*>(1);
  r = cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &fn, 12000, cudaEnableDefault, &status);
  entry("ByVersion.cuNoSuchFunction", r, fn, status, {});
  r = cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 11000, cudaEnableDefault, &status);
  entry("ByVersion.cuMemAllocAsync.too_old", r, fn, status, async);
  r = cudaGetDriverEntryPointByVersion(nullptr, &fn, 12000, cudaEnableDefault, &status);
  entry("ByVersion.null_symbol", r, nullptr, status, {});
  cudaGetLastError();

  // What the runtime hands out is callable.
  cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, nullptr);
  unsigned long long dptr = 0;
  auto mem_alloc = reinterpret_cast<int (*)(unsigned long long*, size_t)>(fn);
  value("cuMemAlloc_through_entry_point", mem_alloc != nullptr ? mem_alloc(&dptr, 4096) : -1);
  expect("cudaFree", cudaFree(reinterpret_cast<void*>(dptr)));
}

void threads() {
  constexpr int kThreads = 8;
  std::vector<std::thread> pool;
  std::vector<cudaError_t> results(kThreads, cudaErrorUnknown);
  for (int i = 0; i < kThreads; ++i)
    pool.emplace_back([&results, i] {
      void* p = nullptr;
      cudaError_t e = cudaMalloc(&p, kMiB);
      if (e == cudaSuccess) e = cudaFree(p);
      results[i] = e;
    });
  for (std::thread& t : pool) t.join();
  int ok = 0;
  for (cudaError_t e : results) ok += e == cudaSuccess;
  value("threads_ok", ok);
  require("all_threads_ok", ok == kThreads);
}

void reset() {
  size_t start = free_memory("start");
  void* p = nullptr;
  expect("cudaMalloc", cudaMalloc(&p, 4 * kMiB));
  free_memory("allocated");
  expect("cudaDeviceReset", cudaDeviceReset());
  size_t after_reset = free_memory("after_reset");
  value("reset_released", static_cast<long long>(after_reset == start));
  expect("cudaMalloc", cudaMalloc(&p, kMiB));
  expect("cudaFree", cudaFree(p));
  require("all_memory_back", free_memory("end") == start);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "probe") probe();
  else if (mode == "errors") errors();
  else if (mode == "lasterror") lasterror();
  else if (mode == "devices") devices();
  else if (mode == "memory") memory();
  else if (mode == "pools") pools();
  else if (mode == "streams") streams();
  else if (mode == "entrypoint") entrypoint();
  else if (mode == "ptds") ptds_checks();
  else if (mode == "kernels") kernel_checks();
  else if (mode == "threads") threads();
  else if (mode == "reset") reset();
  else {
    std::fprintf(stderr,
                 "usage: %s probe|errors|lasterror|devices|memory|pools|streams|kernels|entrypoint|ptds|threads|"
                 "reset\n",
                 argv[0]);
    return 2;
  }
  std::printf("failures=%d\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
