// The whole device and the GPUs a process touches, on the simulated device:
//   others N      makes a 4 MiB workspace through libsim_cublas.so (its path in SIM_CUBLAS_PATH), holds 64 MiB
//                 of its own, then asks for N MiB, which must fail for lack of memory
//   two-devices   makes a context on device 0 (cudaFree(0)), then uses device 1 alone: 16 MiB there
//   rank D        allocates 16 MiB on device D (a rank that picked D, whatever its LOCAL_RANK says); with
//                 PLACEMENT_BARRIER=DIR:N it holds them until N processes have come to DIR (ranks that run together)
// Exits 0 when things went as said.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/program_check.h"

namespace {

constexpr size_t kMiB = size_t{1} << 20;

void* device_alloc(size_t bytes) {
  void* ptr = nullptr;
  CHECK_OK(cudaMalloc(&ptr, bytes));
  return ptr;
}

int others(size_t request_mib) {
  void* library = dlopen(SIM_CUBLAS_PATH, RTLD_NOW);
  if (!library) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  auto create = reinterpret_cast<int (*)(void**, size_t)>(dlsym(library, "simcublasCreate"));
  void* workspace = nullptr;
  CHECK_EQ(create(&workspace, 4 * kMiB), 0);
  void* own = device_alloc(64 * kMiB);
  void* ptr = nullptr;
  CHECK_EQ(cudaMalloc(&ptr, request_mib * kMiB), cudaErrorMemoryAllocation);
  CHECK_OK(cudaFree(own));
  CHECK_OK(cudaFree(workspace));
  return 0;
}

int two_devices() {
  CHECK_OK(cudaFree(nullptr));  // the context on device 0: what touching the default device does
  CHECK_OK(cudaSetDevice(1));
  CHECK_OK(cudaFree(device_alloc(16 * kMiB)));
  return 0;
}

// Leaves a file in DIR and waits (30 s at most) until N files are there.
void barrier(const char* spec) {
  std::string text(spec);
  size_t colon = text.rfind(':');
  std::string dir = text.substr(0, colon);
  size_t count = std::strtoul(text.c_str() + colon + 1, nullptr, 10);
  std::ofstream(dir + "/" + std::to_string(getpid())).put('x');
  for (int tries = 0; tries < 3000; ++tries) {
    size_t present = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) present += entry.is_regular_file() ? 1 : 0;
    if (present >= count) return;
    usleep(10000);
  }
}

int rank(int device) {
  CHECK_OK(cudaSetDevice(device));
  void* held = device_alloc(16 * kMiB);
  if (const char* spec = std::getenv("PLACEMENT_BARRIER")) barrier(spec);
  CHECK_OK(cudaFree(held));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "others") == 0) return others(std::strtoull(argv[2], nullptr, 10));
  if (argc == 2 && std::strcmp(argv[1], "two-devices") == 0) return two_devices();
  if (argc == 3 && std::strcmp(argv[1], "rank") == 0) return rank(std::atoi(argv[2]));
  std::fprintf(stderr, "usage: placement_workload others MiB | two-devices | rank DEVICE\n");
  return 2;
}
