#include "interpose/stacks/module_map.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "interpose/base/loader_walk.h"

namespace gpumemtrace::interpose {

namespace {

std::string build_id_of(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type != PT_NOTE) continue;
    const char* note = reinterpret_cast<const char*>(info->dlpi_addr + phdr.p_vaddr);
    const char* end = note + phdr.p_memsz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      const auto* header = reinterpret_cast<const ElfW(Nhdr)*>(note);
      const char* name = note + sizeof(ElfW(Nhdr));
      const char* desc = name + ((header->n_namesz + 3) & ~3u);
      const char* next = desc + ((header->n_descsz + 3) & ~3u);
      if (next > end) break;
      if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        return std::string(desc, header->n_descsz);
      }
      note = next;
    }
  }
  return {};
}

std::string executable_path() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

}  // namespace

LoadCounters load_counters() {
  LoadCounters counters;
  walk_loaded_objects(
      [](dl_phdr_info* info, size_t size, void* data) -> int {
        if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
          *static_cast<LoadCounters*>(data) = {info->dlpi_adds, info->dlpi_subs};
        }
        return 1;
      },
      &counters);
  return counters;
}

namespace {

// The object's path, load bias, the range covering its PT_LOAD segments and its build id.
bool describe(const dl_phdr_info* info, bool is_first, trace::ModuleInfo& module) {
  module.base = info->dlpi_addr;
  module.low = UINT64_MAX;
  module.high = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
    uint64_t low = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    uint64_t high = low + info->dlpi_phdr[i].p_memsz;
    if (low < module.low) module.low = low;
    if (high > module.high) module.high = high;
  }
  if (module.low == UINT64_MAX) return false;
  // The main program comes first with an empty name.
  module.path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : is_first ? executable_path() : std::string();
  module.build_id = build_id_of(info);
  return true;
}

}  // namespace

std::vector<trace::ModuleInfo> loaded_modules() {
  std::vector<trace::ModuleInfo> modules;
  walk_loaded_objects(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* out = static_cast<std::vector<trace::ModuleInfo>*>(data);
        trace::ModuleInfo module;
        if (describe(info, out->empty(), module)) out->push_back(std::move(module));
        return 0;
      },
      &modules);
  return modules;
}

trace::ModuleInfo module_containing(uintptr_t address) {
  struct Search {
    uintptr_t address;
    trace::ModuleInfo module;
    bool first = true;
  } search{address, {}};
  walk_loaded_objects(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        trace::ModuleInfo module;
        bool described = describe(info, s->first, module);
        s->first = false;
        if (!described || s->address < module.low || s->address >= module.high) return 0;
        s->module = std::move(module);
        return 1;
      },
      &search);
  return search.module;
}

}  // namespace gpumemtrace::interpose
