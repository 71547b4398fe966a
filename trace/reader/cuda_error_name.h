// Names of the CUresult codes that memory calls return, as cuGetErrorName spells them.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpumemtrace::trace {

// "CUDA_ERROR_OUT_OF_MEMORY" for 2; empty for a code this build does not know.
std::string_view cuda_error_name(uint64_t code);

}  // namespace gpumemtrace::trace
