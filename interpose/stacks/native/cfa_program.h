// The call frame instructions of DWARF (DW_CFA_*), run up to a code address, restricted to what the fast
// stack walker needs there: the canonical frame address (CFA), and where rbp and the return address are.
#pragma once

#include <cstdint>

#include "interpose/stacks/native/eh_frame.h"

namespace gpumemtrace::interpose::cfa {

// DWARF register numbers on x86-64.
inline constexpr uint64_t kRbp = 6;
inline constexpr uint64_t kRsp = 7;
inline constexpr uint64_t kReturnAddress = 16;

// The rule of one register the walker cares about.
struct RegisterRule {
  enum class Kind : uint8_t { Same, AtCfa, AtRbp, Undefined, Other } kind = Kind::Same;
  int64_t offset = 0;
};

// One row of the CFA table, restricted to what the walker needs.
struct Row {
  uint64_t cfa_register = ~uint64_t{0};
  int64_t cfa_offset = 0;
  bool cfa_deref = false;   // CFA = *(cfa_register + cfa_offset)
  bool cfa_other = false;   // an expression we do not understand
  RegisterRule rbp, return_address;

  RegisterRule* rule(uint64_t reg) {
    return reg == kRbp ? &rbp : reg == kReturnAddress ? &return_address : nullptr;
  }
  const RegisterRule* rule(uint64_t reg) const { return const_cast<Row*>(this)->rule(reg); }
};

// The row of the CFA table at `pc` for an FDE: its CIE's initial instructions, then its own up to pc.
// False for an instruction this reader does not know.
bool row_at(const eh_frame::Fde& fde, uintptr_t pc, Row& row);

}  // namespace gpumemtrace::interpose::cfa
