// The functions of not_supported.inc: cudaErrorNotSupported (also the thread's last error), and one line on stderr
// the first time each is called.
#include <cstdio>

#include "not_supported.inc"
#include "runtime.h"

using namespace sim_cudart;

namespace {

cudaError_t not_supported(std::atomic<bool>& said, const char* name, const char* why) {
  if (!said.exchange(true, std::memory_order_relaxed))
    std::fprintf(stderr, "gpumemtrace simulated CUDA runtime: %s is not supported: %s\n", name, why);
  return fail(cudaErrorNotSupported);
}

}  // namespace

#define SIM_DEFINE_NOT_SUPPORTED(name, why, params)             \
  SIM_CUDART_API cudaError_t CUDARTAPI name params {            \
    static constinit std::atomic<bool> said{false};             \
    return not_supported(said, #name, why);                     \
  }
SIM_NOT_SUPPORTED_FUNCTIONS(SIM_DEFINE_NOT_SUPPORTED)
#undef SIM_DEFINE_NOT_SUPPORTED
