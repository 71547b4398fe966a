// cuGetProcAddress / cuGetProcAddress_v2 against the lookups NVIDIA's runtime 13.0 makes (tests/data), and the
// version, per-thread and not-found rules.
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <fstream>
#include <sstream>
#include <string>

#include "sim_test.h"
#include "tests/support/subprocess.h"

namespace gpumemtrace::sim::test {
namespace {

void* driver_handle() {
  static void* handle = dlopen((gpumemtrace::test::sim_dir() + "/libcuda.so.1").c_str(), RTLD_NOW | RTLD_NOLOAD);
  return handle;
}

struct Lookup {
  CUresult result;
  void* fn;
  CUdriverProcAddressQueryResult status;
};

Lookup lookup(const char* name, int version, cuuint64_t flags = 0) {
  Lookup l{CUDA_ERROR_UNKNOWN, reinterpret_cast<void*>(1), static_cast<CUdriverProcAddressQueryResult>(-1)};
  l.result = cuGetProcAddress(name, &l.fn, version, flags, &l.status);
  return l;
}

TEST(ProcAddressTest, EveryObservedRuntimeLookupResolvesLikeTheRealDriver) {
  ASSERT_NE(driver_handle(), nullptr) << dlerror();
  std::ifstream tsv(gpumemtrace::test::test_data_dir() + "/cudart13-driver-lookups.tsv");
  ASSERT_TRUE(tsv.good());
  std::string line;
  int rows = 0, found = 0;
  bool header = true;
  while (std::getline(tsv, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // symbol cuda_version flags resolved
      header = false;
      continue;
    }
    std::istringstream fields(line);
    std::string symbol, resolved;
    int version = 0;
    cuuint64_t flags = 0;
    fields >> symbol >> version >> flags >> resolved;
    rows++;
    void* expected = dlsym(driver_handle(), resolved.c_str());
    Lookup l = lookup(symbol.c_str(), version, flags);
    SCOPED_TRACE(line);
    EXPECT_EQ(l.result, CUDA_SUCCESS);
    if (expected) {
      found++;
      EXPECT_EQ(l.fn, expected);
      EXPECT_EQ(l.status, CU_GET_PROC_ADDRESS_SUCCESS);
    } else {
      EXPECT_EQ(l.fn, nullptr);
      EXPECT_EQ(l.status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    }
  }
  EXPECT_EQ(rows, 439);
  // The memory APIs and everything the runtime needs to run are among them.
  EXPECT_GE(found, 160);
}

TEST(ProcAddressTest, HighestVersionNotAboveTheRequest) {
  EXPECT_EQ(lookup("cuMemAlloc", 3020).fn, dlsym(driver_handle(), "cuMemAlloc_v2"));
  EXPECT_EQ(lookup("cuMemAlloc", 13000).fn, dlsym(driver_handle(), "cuMemAlloc_v2"));
  EXPECT_EQ(lookup("cuMemAlloc", 2000).fn, dlsym(driver_handle(), "cuMemAlloc"));
  EXPECT_EQ(lookup("cuCtxCreate", 11040).fn, dlsym(driver_handle(), "cuCtxCreate_v3"));
  EXPECT_EQ(lookup("cuCtxCreate", 12050).fn, dlsym(driver_handle(), "cuCtxCreate_v4"));
  EXPECT_EQ(lookup("cuCtxGetDevice", 12090).fn, dlsym(driver_handle(), "cuCtxGetDevice"));
  EXPECT_EQ(lookup("cuCtxGetDevice", 13000).fn, dlsym(driver_handle(), "cuCtxGetDevice_v2"));
}

TEST(ProcAddressTest, PerThreadDefaultStreamFlag) {
  constexpr cuuint64_t kPerThread = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  EXPECT_EQ(lookup("cuMemAllocAsync", 11020, kPerThread).fn, dlsym(driver_handle(), "cuMemAllocAsync_ptsz"));
  EXPECT_EQ(lookup("cuMemAllocAsync", 11020, CU_GET_PROC_ADDRESS_LEGACY_STREAM).fn,
            dlsym(driver_handle(), "cuMemAllocAsync"));
  EXPECT_EQ(lookup("cuMemcpyHtoD", 7000, kPerThread).fn, dlsym(driver_handle(), "cuMemcpyHtoD_v2_ptds"));
  // Below the version that introduced the per-thread variant, the legacy one.
  EXPECT_EQ(lookup("cuMemcpyHtoD", 3020, kPerThread).fn, dlsym(driver_handle(), "cuMemcpyHtoD_v2"));
  // Names without a per-thread variant ignore the flag.
  EXPECT_EQ(lookup("cuMemAlloc", 3020, kPerThread).fn, dlsym(driver_handle(), "cuMemAlloc_v2"));
  EXPECT_NE(dlsym(driver_handle(), "cuMemAllocAsync_ptsz"), nullptr);
}

TEST(ProcAddressTest, VersionNotSufficient) {
  Lookup l = lookup("cuMemAllocAsync", 11010);
  EXPECT_EQ(l.result, CUDA_SUCCESS);
  EXPECT_EQ(l.fn, nullptr);
  EXPECT_EQ(l.status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

TEST(ProcAddressTest, UnknownNamesAndTheEmptyProbe) {
  for (const char* name : {"", "cuNoSuchFunction", "cuMemAlloc_v2", "cuGraphCreate"}) {
    Lookup l = lookup(name, name[0] ? 13000 : 0);
    SCOPED_TRACE(name);
    EXPECT_EQ(l.result, CUDA_SUCCESS);
    EXPECT_EQ(l.fn, nullptr);
    EXPECT_EQ(l.status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  }
  void* fn = nullptr;
  EXPECT_EQ(cuGetProcAddress("cuInit", nullptr, 13000, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGetProcAddress(nullptr, &fn, 13000, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGetProcAddress("cuInit", &fn, 13010, 0, nullptr), CUDA_ERROR_INVALID_VALUE);  // newer than 13.0
  EXPECT_EQ(cuGetProcAddress("cuInit", &fn, 13000, 4, nullptr), CUDA_ERROR_INVALID_VALUE);  // unknown flag
  ASSERT_CU(cuGetProcAddress("cuInit", &fn, 2000, 0, nullptr));  // the status is optional
  EXPECT_EQ(fn, dlsym(driver_handle(), "cuInit"));
}

TEST(ProcAddressTest, GetProcAddressFindsItself) {
  EXPECT_EQ(lookup("cuGetProcAddress", 11030).fn, dlsym(driver_handle(), "cuGetProcAddress"));
  EXPECT_EQ(lookup("cuGetProcAddress", 12000).fn, dlsym(driver_handle(), "cuGetProcAddress_v2"));
  // The pre-12.0 entry point has no status: not found is CUDA_ERROR_NOT_FOUND.
  auto legacy = reinterpret_cast<PFN_cuGetProcAddress_v11030>(dlsym(driver_handle(), "cuGetProcAddress"));
  ASSERT_NE(legacy, nullptr);
  void* fn = nullptr;
  ASSERT_CU(legacy("cuMemFree", &fn, 3020, 0));
  EXPECT_EQ(fn, dlsym(driver_handle(), "cuMemFree_v2"));
  EXPECT_EQ(legacy("cuNoSuchFunction", &fn, 13000, 0), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(fn, nullptr);
}

TEST(ProcAddressTest, CuGetExportTableIsNotSupported) {
  const void* table = reinterpret_cast<const void*>(1);
  CUuuid id{};
  EXPECT_EQ(cuGetExportTable(&table, &id), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(table, nullptr);
}

// A tracer preloaded in front of the driver exports the same names: the driver's own table is not affected.
TEST(ProcAddressTest, ReturnsItsOwnDefinitionsWhenANameIsInterposed) {
  auto r = gpumemtrace::test::run_process(
      {gpumemtrace::test::bin_dir() + "/sim_driver_probe", "--interposed"},
      gpumemtrace::test::sim_env({{"LD_PRELOAD", gpumemtrace::test::lib_dir() + "/libsim_driver_interposer.so"},
                                  {"GPUMEMTRACE_SIM_DEVICES", "1"},
                                  {"GPUMEMTRACE_SIM_OTHERS_MEMORY", std::nullopt}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "init=0 devices=1\ndirect=999\nlooked_up=0\n");
}

TEST(ProcAddressTest, LookupLogRecordsEveryRequest) {
  std::string log = ::testing::TempDir() + "/sim_driver_lookup_log.tsv";
  std::remove(log.c_str());
  auto r = gpumemtrace::test::run_process({gpumemtrace::test::bin_dir() + "/sim_driver_probe", "--lookups"},
                                          gpumemtrace::test::sim_env({{"GPUMEMTRACE_SIM_LOOKUP_LOG", log}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(gpumemtrace::test::read_file(log), "\t0\t0\ncuInit\t2000\t0\ncuMemAllocAsync\t11020\t2\n");
}

}  // namespace
}  // namespace gpumemtrace::sim::test
