#pragma once

namespace gpumemtrace::sim {
// This library's own definition of an exported driver symbol (e.g. "cuMemAlloc_v2"), or nullptr.
void* find_export(const char* name);
}  // namespace gpumemtrace::sim
