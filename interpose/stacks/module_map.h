// The loaded ELF objects (path, load address, build id), so the analyzer can symbolize offline.
#pragma once

#include <cstdint>
#include <vector>

#include "gpumemtrace/trace_records.h"

namespace gpumemtrace::interpose {

// Counters of objects loaded and unloaded so far (glibc's dlpi_adds/dlpi_subs): cheap change detection.
struct LoadCounters {
  uint64_t adds = 0;
  uint64_t subs = 0;
  bool operator==(const LoadCounters&) const = default;
};

LoadCounters load_counters();
std::vector<trace::ModuleInfo> loaded_modules();
// The loaded object whose segments hold the address (empty path and range 0 if none).
trace::ModuleInfo module_containing(uintptr_t address);

}  // namespace gpumemtrace::interpose
