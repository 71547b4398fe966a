// In-process tests of the simulated runtime's pure parts (linked from libcudart_static.a): the driver-error
// mapping, error names and strings, the version, and the generated lookup table. Nothing here loads a driver.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime.h"
#include "tests/support/subprocess.h"

namespace {

using sim_cudart::to_runtime_error;

TEST(RuntimeErrors, DriverErrorsMapToRuntimeErrors) {
  EXPECT_EQ(to_runtime_error(CUDA_SUCCESS), cudaSuccess);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_OUT_OF_MEMORY), cudaErrorMemoryAllocation);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_INVALID_VALUE), cudaErrorInvalidValue);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_NO_DEVICE), cudaErrorNoDevice);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_INVALID_DEVICE), cudaErrorInvalidDevice);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_STUB_LIBRARY), cudaErrorStubLibrary);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_NOT_INITIALIZED), cudaErrorInitializationError);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_DEINITIALIZED), cudaErrorCudartUnloading);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_INVALID_CONTEXT), cudaErrorDeviceUninitialized);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_INVALID_HANDLE), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_NOT_FOUND), cudaErrorSymbolNotFound);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_NOT_READY), cudaErrorNotReady);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_NOT_SUPPORTED), cudaErrorNotSupported);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE), cudaErrorSetOnActiveProcess);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_UNKNOWN), cudaErrorUnknown);
}

TEST(RuntimeErrors, UnmappedDriverErrorsAreUnknown) {
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_CONTEXT_ALREADY_CURRENT), cudaErrorUnknown);
  EXPECT_EQ(to_runtime_error(CUDA_ERROR_KEY_ROTATION), cudaErrorUnknown);
  EXPECT_EQ(to_runtime_error(static_cast<CUresult>(998)), cudaErrorUnknown);
  EXPECT_EQ(to_runtime_error(static_cast<CUresult>(123456)), cudaErrorUnknown);
}

TEST(RuntimeErrors, EveryMappedErrorHasAName) {
  for (int code = 0; code < 1000; ++code) {
    cudaError_t e = to_runtime_error(static_cast<CUresult>(code));
    EXPECT_STRNE(cudaGetErrorName(e), "unrecognized error code") << "CUresult " << code;
  }
}

TEST(RuntimeErrors, NamesAndStrings) {
  EXPECT_STREQ(cudaGetErrorName(cudaSuccess), "cudaSuccess");
  EXPECT_STREQ(cudaGetErrorString(cudaSuccess), "no error");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInsufficientDriver), "cudaErrorInsufficientDriver");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInsufficientDriver),
               "CUDA driver version is insufficient for CUDA runtime version");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorNoDevice), "cudaErrorNoDevice");
  EXPECT_STREQ(cudaGetErrorName(static_cast<cudaError_t>(12345)), "unrecognized error code");
  EXPECT_STREQ(cudaGetErrorString(static_cast<cudaError_t>(-1)), "unrecognized error code");
}

TEST(RuntimeVersion, IsCuda13WithoutADriver) {
  int v = 0;
  EXPECT_EQ(cudaRuntimeGetVersion(&v), cudaSuccess);
  EXPECT_EQ(v, 13000);
  EXPECT_EQ(cudaRuntimeGetVersion(nullptr), cudaErrorInvalidValue);
}

// The generated table is the TSV, row for row.
TEST(RuntimeLookupTable, IsTheObservedListInOrder) {
  std::ifstream tsv(gpumemtrace::test::test_data_dir() + "/cudart13-driver-lookups.tsv");
  ASSERT_TRUE(tsv) << "missing tests/data/cudart13-driver-lookups.tsv";
  std::vector<std::string> rows;
  for (std::string line; std::getline(tsv, line);)
    if (!line.empty() && line[0] != '#' && line.rfind("symbol\t", 0) != 0) rows.push_back(line);
  ASSERT_EQ(rows.size(), sim_cudart::kRowCount);
  for (unsigned i = 0; i < sim_cudart::kRowCount; ++i) {
    const sim_cudart::DriverLookup& l = sim_cudart::kLookups[i];
    std::ostringstream row;
    row << l.symbol << '\t' << l.cuda_version << '\t' << l.flags << '\t' << l.resolved;
    EXPECT_EQ(row.str(), rows[i]) << "row " << i;
  }
}

TEST(RuntimeLookupTable, NamedRowsAreTheRightRequests) {
  using namespace sim_cudart;
  auto is = [](Row r, const char* symbol, int version, unsigned flags) {
    return std::strcmp(kLookups[r].symbol, symbol) == 0 && kLookups[r].cuda_version == version &&
           kLookups[r].flags == flags;
  };
  EXPECT_TRUE(is(R_cuGetProcAddress_v2, "cuGetProcAddress", 12000, 0));
  EXPECT_TRUE(is(R_cuMemAlloc_v2, "cuMemAlloc", 3020, 0));
  EXPECT_TRUE(is(R_cuMemAllocAsync, "cuMemAllocAsync", 11020, 0));
  EXPECT_TRUE(is(R_cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020, 2));
  EXPECT_TRUE(is(R_cuMemcpy_ptds, "cuMemcpy", 7000, 2));
  EXPECT_TRUE(is(R_cuGLMapBufferObject_at7000_f2, "cuGLMapBufferObject", 7000, 2));
  EXPECT_LT(R_cuGetProcAddress_v2, R_cuDeviceGet);  // later lookups go through the @12000 pointer
}

}  // namespace
