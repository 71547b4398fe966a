// Told now and then during long work: what is being done ("reading", "converting", "packing"), how far it is
// and of how much (bytes of a file, entries of a history). The command shows it on a terminal
// (analyzer/cli/progress.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace gpumemtrace {

using ProgressFn = std::function<void(std::string_view doing, uint64_t done, uint64_t total)>;

}  // namespace gpumemtrace
