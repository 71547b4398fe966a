// Who made an allocation, from its stack: the library (cuBLAS, cuDNN, NCCL, the framework, ...) whose frame is
// innermost in it, else the program itself. One table of name patterns, in memory_owners.cpp.
#pragma once

#include <string_view>

#include "analyzer/report/stacks.h"

namespace gpumemtrace::report {

inline constexpr std::string_view kProgramOwner = "the program's own";

// The owner's name ("cuBLAS", "PyTorch", ...), or kProgramOwner when no frame of the stack matches the table.
std::string_view memory_owner(const Frames& frames);

// Whether an owner is the framework's allocator (its segments are what the framework reports as reserved).
bool is_framework_owner(std::string_view owner);

}  // namespace gpumemtrace::report
