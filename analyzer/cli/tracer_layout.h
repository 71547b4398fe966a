// Where the tracer library and the simulated device sit relative to the gpumemtrace executable:
//   build tree  build/bin/gpumemtrace   build/lib/libgpumemtrace.so   build/lib/sim/
//   installed   PREFIX/bin/gpumemtrace  PREFIX/lib/libgpumemtrace.so  PREFIX/lib/gpumemtrace/sim/
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

namespace gpumemtrace::cli {

std::filesystem::path tracer_library_path();
// The folders the simulated device may be in, in the order they are tried.
std::vector<std::filesystem::path> sim_dir_candidates();
std::optional<std::filesystem::path> find_sim_dir();

}  // namespace gpumemtrace::cli
