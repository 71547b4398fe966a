#include "analyzer/symbolize/symbol_index.h"

#include <gelf.h>

#include <algorithm>

namespace gpumemtrace::symbolize {

namespace {

uint8_t binding_rank(unsigned char info) {
  switch (GELF_ST_BIND(info)) {
    case STB_GLOBAL: return 3;
    case STB_GNU_UNIQUE: return 2;
    case STB_WEAK: return 1;
    default: return 0;
  }
}

// The symbols libdwfl considers at all.
bool is_candidate(const char* name, const GElf_Sym& symbol) {
  int type = GELF_ST_TYPE(symbol.st_info);
  return name && name[0] != '\0' && symbol.st_shndx != SHN_UNDEF && type != STT_SECTION && type != STT_FILE &&
         type != STT_TLS;
}

// Symbols overlapping one address are a handful; a longer walk (a huge symbol spanning many) is left to libdwfl.
constexpr size_t kMostSteps = 64;

}  // namespace

SymbolIndex::SymbolIndex(Dwfl_Module* module) : module_(module) {
  int count = dwfl_module_getsymtab(module);
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  size_t sections = 0;
  // Without section headers libdwfl reads the dynamic symbols through the program headers and searches them
  // in one part, not as globals then locals.
  if (count <= 1 || count >= (1 << 29) || !elf || elf_getshdrnum(elf, &sections) != 0 || sections == 0) return;
  // Kept only once the whole table is read: a table the index does not answer for holds no memory.
  std::vector<Sized> sized;
  std::vector<GElf_Addr> global_labels;
  sized.reserve(static_cast<size_t>(count));
  bool in_globals = false;
  for (int i = 1; i < count; ++i) {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    const char* name = dwfl_module_getsym_info(module, i, &symbol, &address, nullptr, nullptr, nullptr);
    if (!name) continue;
    // libdwfl splits the table where its header says the locals end, which the ELF rules put after the last
    // local symbol: a table out of that order is left to libdwfl.
    bool local = GELF_ST_BIND(symbol.st_info) == STB_LOCAL;
    if (local && in_globals) return;
    in_globals = in_globals || !local;
    has_locals_ = has_locals_ || local;
    if (!is_candidate(name, symbol)) continue;
    if (symbol.st_size == 0) {
      if (!local) global_labels.push_back(address);
      continue;
    }
    if (symbol.st_size > UINT32_MAX) return;
    sized.push_back({address, static_cast<uint32_t>(symbol.st_size), static_cast<uint32_t>(i),
                      binding_rank(symbol.st_info), !local});
  }
  std::sort(sized.begin(), sized.end(), [](const Sized& a, const Sized& b) { return a.start < b.start; });
  std::sort(global_labels.begin(), global_labels.end());
  sized_ = std::move(sized);
  global_labels_ = std::move(global_labels);
  reach_.resize(sized_.size());
  GElf_Addr reach = 0;
  for (size_t i = 0; i < sized_.size(); ++i) reach_[i] = reach = std::max(reach, sized_[i].end());
  usable_ = true;
}

const SymbolIndex::Sized* SymbolIndex::choose(const std::vector<const Sized*>& containing, bool global) {
  const Sized* chosen = nullptr;
  for (const Sized* symbol : containing) {
    if (static_cast<bool>(symbol->global) != global) continue;
    if (!chosen || chosen->start < symbol->start || chosen->binding < symbol->binding) chosen = symbol;
  }
  return chosen;
}

std::optional<const char*> SymbolIndex::name(GElf_Addr address) const {
  if (!usable_) return std::nullopt;
  auto after = std::upper_bound(sized_.begin(), sized_.end(), address,
                                [](GElf_Addr a, const Sized& symbol) { return a < symbol.start; });
  std::vector<const Sized*> containing;
  size_t steps = 0;
  for (size_t i = static_cast<size_t>(after - sized_.begin()); i-- > 0 && reach_[i] > address;) {
    if (++steps > kMostSteps) return std::nullopt;
    if (sized_[i].end() > address) containing.push_back(&sized_[i]);
  }
  std::sort(containing.begin(), containing.end(),
            [](const Sized* a, const Sized* b) { return a->position < b->position; });
  const Sized* chosen = choose(containing, true);
  // Else the locals, unless libdwfl stops before them: there are none, or a global label is right at the
  // address.
  if (!chosen && has_locals_ && !std::binary_search(global_labels_.begin(), global_labels_.end(), address))
    chosen = choose(containing, false);
  if (!chosen) return std::nullopt;
  GElf_Sym symbol;
  GElf_Addr start = 0;
  return dwfl_module_getsym_info(module_, static_cast<int>(chosen->position), &symbol, &start, nullptr, nullptr,
                                 nullptr);
}

}  // namespace gpumemtrace::symbolize
