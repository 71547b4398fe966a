// cuGetProcAddress and cuGetProcAddress_v2 with NVIDIA's rules:
//  - the typedefs PFN_<name>_v<version> of cudaTypedefs.h, in increasing version order, are the exported symbols
//    <name>, <name>_v2, <name>_v3 ...; a request for version V gets the highest one not above V;
//  - with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, a name that has a PFN_<name>_v<W>_ptsz (or _ptds) typedef
//    resolves to the per-thread export (<symbol>_ptsz / _ptds) when V >= W;
//  - the pointer returned is this library's own definition of that symbol; a symbol the simulator does not
//    implement is "not found".
// The name tables are generated from the installed headers at build time (gen_tables.cmake).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda_api.h"
#include "proc_table.inc"
#include "export_table.h"
#include "state.h"

namespace gpumemtrace::sim {
namespace {

struct ProcEntry {
  const char* name;
  const char* pt_suffix;  // "" when there is no per-thread variant
  int pt_version;
  int versions[8];        // increasing, 0-terminated
};

#define SIM_PROC_ENTRY(name, pt_suffix, pt_version, ...) ProcEntry{name, pt_suffix, pt_version, __VA_ARGS__},
constexpr ProcEntry kProcEntries[] = {SIM_PROC_ENTRIES(SIM_PROC_ENTRY)};
#undef SIM_PROC_ENTRY

const ProcEntry* find_entry(const char* name) {
  auto it = std::lower_bound(std::begin(kProcEntries), std::end(kProcEntries), name,
                             [](const ProcEntry& e, const char* n) { return std::strcmp(e.name, n) < 0; });
  return it != std::end(kProcEntries) && std::strcmp(it->name, name) == 0 ? it : nullptr;
}

// GPUMEMTRACE_SIM_LOOKUP_LOG=FILE: one line "name<TAB>version<TAB>flags" per request (a test aid).
void log_lookup(const char* symbol, int version, cuuint64_t flags) {
  static const int fd = [] {
    const char* path = std::getenv("GPUMEMTRACE_SIM_LOOKUP_LOG");
    return path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
  }();
  if (fd < 0) return;
  char line[320];
  int n = std::snprintf(line, sizeof line, "%.256s\t%d\t%llu\n", symbol ? symbol : "(null)", version,
                        static_cast<unsigned long long>(flags));
  if (n > 0) (void)!write(fd, line, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1));
}

constexpr cuuint64_t kKnownFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

// The shared lookup; CUDA_SUCCESS with *status telling found / not found / version not sufficient.
CUresult resolve(const char* symbol, void** pfn, int version, cuuint64_t flags,
                 CUdriverProcAddressQueryResult* status) {
  log_lookup(symbol, version, flags);
  if (!symbol || !pfn || (flags & ~kKnownFlags)) return CUDA_ERROR_INVALID_VALUE;
  if (version > kDriverVersion) return CUDA_ERROR_INVALID_VALUE;  // newer than this driver
  *pfn = nullptr;
  *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const ProcEntry* entry = find_entry(symbol);
  if (!entry) return CUDA_SUCCESS;
  int index = -1;
  for (int i = 0; i < 8 && entry->versions[i] != 0; i++)
    if (entry->versions[i] <= version) index = i;
  if (index < 0) {
    *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_SUCCESS;
  }
  char name[160];
  int n = index == 0 ? std::snprintf(name, sizeof name, "%s", symbol)
                     : std::snprintf(name, sizeof name, "%s_v%d", symbol, index + 1);
  if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && entry->pt_version && version >= entry->pt_version)
    std::snprintf(name + n, sizeof name - n, "%s", entry->pt_suffix);
  if (void* fn = find_export(name)) {
    *pfn = fn;
    *status = CU_GET_PROC_ADDRESS_SUCCESS;
  }
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace gpumemtrace::sim

using namespace gpumemtrace::sim;

// CUDA 12.0+: not found is CUDA_SUCCESS with *pfn = NULL and the reason in *symbolStatus (NVIDIA's documented
// behaviour; the empty-name probe of NVIDIA's runtime is such a not-found symbol).
CUAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* symbolStatus) {
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult r = resolve(symbol, pfn, cudaVersion, flags, &status);
  if (r == CUDA_SUCCESS && symbolStatus) *symbolStatus = status;
  return r;
}

// CUDA 11.3 - 11.8 signature, kept for old runtimes: without a status out-parameter, not found is reported as
// CUDA_ERROR_NOT_FOUND (which those runtimes turn into cudaErrorSymbolNotFound).
CUAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult r = resolve(symbol, pfn, cudaVersion, flags, &status);
  if (r == CUDA_SUCCESS && status != CU_GET_PROC_ADDRESS_SUCCESS) return CUDA_ERROR_NOT_FOUND;
  return r;
}
