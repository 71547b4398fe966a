// The ELF symbol libdwfl's dwfl_module_addrinfo names for an address, found by binary search. libdwfl scans
// the module's whole symbol table for every address it is asked about: libtorch_cpu.so has 620 k symbols,
// some 34 M instructions a frame, most of the time of a report on a PyTorch trace. The index reads the table
// once, with libdwfl's own dwfl_module_getsym_info, so its addresses are libdwfl's.
//
// libdwfl's choice (elfutils 0.188, dwfl_module_addrsym.c): the table's global part first, then, if nothing
// there fits, its local part; in each, among the symbols with a size that contain the address, in table
// order, one replaces the one chosen so far when it starts higher or binds better (global > unique > weak >
// local). Only where no symbol with a size contains the address does a symbol without one (an assembly label)
// count, by rules that depend on the whole table. The index answers where symbols with a size decide, nearly
// every frame, and says when it cannot; the caller then asks libdwfl. symbolize/symbol_index_test.cpp holds
// it to dwfl_module_addrinfo on the machine's libraries, so a libdwfl that chooses otherwise fails there.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace gpumemtrace::symbolize {

class SymbolIndex {
 public:
  // Reads the module's symbol table; one that breaks the ELF rules' order (or has a symbol of 4 GiB or more,
  // or more than 2^29 symbols), or none, makes an index that never answers.
  explicit SymbolIndex(Dwfl_Module* module);

  // The name dwfl_module_addrinfo gives `address` (the module's address, bias included), or nullopt where the
  // index cannot tell and libdwfl must be asked. The name lives as long as the module.
  std::optional<const char*> name(GElf_Addr address) const;

  // Symbols with a size: what the index answers from.
  size_t size() const { return sized_.size(); }

 private:
  // 16 bytes: libtorch_cpu.so has 620 k of them.
  struct Sized {
    GElf_Addr start;
    uint32_t size;
    uint32_t position : 29;  // in the table: libdwfl's order
    uint32_t binding : 2;    // libdwfl's rank: global 3, unique 2, weak 1, else 0
    uint32_t global : 1;     // in the table's global part, searched first
    GElf_Addr end() const { return start + size < start ? ~GElf_Addr{0} : start + size; }
  };
  // libdwfl's choice among `containing` (in table order) in one part of the table; nullptr for none.
  static const Sized* choose(const std::vector<const Sized*>& containing, bool global);

  Dwfl_Module* module_;
  std::vector<Sized> sized_;              // by start
  std::vector<GElf_Addr> reach_;          // reach_[i]: the largest end of sized_[0..i]
  std::vector<GElf_Addr> global_labels_;  // starts of the global part's symbols without a size, sorted
  bool has_locals_ = false;               // libdwfl searches a local part
  bool usable_ = false;
};

}  // namespace gpumemtrace::symbolize
