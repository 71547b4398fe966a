// The table behind cuGetProcAddress: exported symbol name -> this library's definition. It is built from the
// candidate names generated from cudaTypedefs.h through weak references, so it cannot drift from what the library
// defines. This file must not include cuda.h: the references use the symbols' assembler names.
#include "export_table.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "proc_table.inc"

// One weak reference per candidate export; the linker binds it to this library's definition when there is one
// (-Bsymbolic-functions keeps it bound here even when another library interposes the name).
#define SIM_WEAK_REF(sym) extern "C" void sim_weak_##sym() __asm__(#sym) __attribute__((weak));
SIM_EXPORT_CANDIDATES(SIM_WEAK_REF)
#undef SIM_WEAK_REF

namespace gpumemtrace::sim {
namespace {

struct Export {
  const char* name;
  void* fn;
};

bool by_name(const Export& a, const Export& b) { return std::strcmp(a.name, b.name) < 0; }

void anchor() {}

// The candidates defined in this library (an undefined weak reference may also bind to another loaded library).
const std::vector<Export>& exports() {
  static const std::vector<Export> table = [] {
    const std::vector<Export> all = {
#define SIM_EXPORT(sym) {#sym, reinterpret_cast<void*>(&sim_weak_##sym)},
        SIM_EXPORT_CANDIDATES(SIM_EXPORT)
#undef SIM_EXPORT
    };
    Dl_info self{};
    dladdr(reinterpret_cast<void*>(&anchor), &self);
    std::vector<Export> ours;
    for (const Export& e : all) {
      Dl_info where{};
      if (e.fn && dladdr(e.fn, &where) && where.dli_fbase == self.dli_fbase) ours.push_back(e);
    }
    std::sort(ours.begin(), ours.end(), by_name);
    return ours;
  }();
  return table;
}

}  // namespace

void* find_export(const char* name) {
  const auto& table = exports();
  auto it = std::lower_bound(table.begin(), table.end(), Export{name, nullptr}, by_name);
  return it != table.end() && std::strcmp(it->name, name) == 0 ? it->fn : nullptr;
}

}  // namespace gpumemtrace::sim
