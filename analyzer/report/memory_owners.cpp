#include "analyzer/report/memory_owners.h"

namespace gpumemtrace::report {

namespace {

enum class Match : uint8_t { Module, Function };

struct OwnerPattern {
  Match match;
  std::string_view text;   // found in the module's file name, or in the function's name
  std::string_view owner;
  bool framework = false;
};

// The first pattern that a frame matches names the owner; the frames are tried innermost first. cuBLASLt before
// cuBLAS (its name contains cuBLAS's). The simulated cuBLAS of the tests (libsim_cublas.so) is cuBLAS by name.
constexpr OwnerPattern kOwners[] = {
    {Match::Module, "cublasLt", "cuBLASLt", false},
    {Match::Module, "cublas", "cuBLAS", false},
    {Match::Module, "cudnn", "cuDNN", false},
    {Match::Module, "nccl", "NCCL", false},
    {Match::Module, "cufft", "cuFFT", false},
    {Match::Module, "cusparse", "cuSPARSE", false},
    {Match::Module, "cusolver", "cuSOLVER", false},
    {Match::Function, "GraphInstantiate", "CUDA graphs", false},
    {Match::Function, "GraphAddMemAllocNode", "CUDA graphs", false},
    {Match::Module, "libc10_cuda", "PyTorch", true},
    {Match::Module, "libxla", "XLA", true},
    {Match::Module, "libtensorflow", "TensorFlow", true},
};

std::string_view file_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string_view memory_owner(const Frames& frames) {
  for (const symbolize::Frame& frame : frames) {
    std::string_view module = file_name(frame.module);
    for (const OwnerPattern& pattern : kOwners) {
      std::string_view where = pattern.match == Match::Module ? module : std::string_view(frame.function);
      if (!where.empty() && where.find(pattern.text) != std::string_view::npos) return pattern.owner;
    }
  }
  return kProgramOwner;
}

bool is_framework_owner(std::string_view owner) {
  for (const OwnerPattern& pattern : kOwners)
    if (pattern.owner == owner) return pattern.framework;
  return false;
}

}  // namespace gpumemtrace::report
