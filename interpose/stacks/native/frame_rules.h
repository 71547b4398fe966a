// How to step from a frame to its caller at one code address, read from the DWARF call frame information
// (.eh_frame) of the loaded object that holds it: the fast stack walker's recipe (fast_unwind.h).
//
// Only the shapes compilers emit for ordinary x86-64 code are understood: the canonical frame address
// (CFA) is rsp or rbp plus an offset (or the stack-realignment form *(rbp + offset)), the return address
// is saved at CFA − 8, and rbp is either untouched or saved at CFA + offset (or, after a realignment, at
// rbp + offset). Anything else (signal frames,
// other expressions, code without unwind information) is Unsupported, and the caller falls back to
// libunwind for the whole stack.
#pragma once

#include <cstdint>

namespace gpumemtrace::interpose {

struct FrameRule {
  enum class Kind : uint8_t {
    Unknown,      // not looked up yet (an empty cache slot)
    Step,         // the caller's frame follows the rule below
    Outermost,    // the return address is undefined: the bottom of the stack
    Unsupported,  // not a shape this walker understands
  };
  enum class Cfa : uint8_t {
    RspOffset,       // CFA = rsp + cfa_offset
    RbpOffset,       // CFA = rbp + cfa_offset
    DerefRbpOffset,  // CFA = *(rbp + cfa_offset) (gcc's stack realignment, DW_OP_breg6 N; DW_OP_deref)
  };
  Kind kind = Kind::Unknown;
  Cfa cfa = Cfa::RspOffset;
  bool rbp_saved = false;     // the caller's rbp is at CFA + rbp_offset; else rbp is unchanged
  bool rbp_from_rbp = false;  // ... at rbp + rbp_offset instead (DW_CFA_expression r6: DW_OP_breg6 N)
  int32_t cfa_offset = 0;
  int32_t rbp_offset = 0;

  // Packed into 64 bits, so a cache slot holds it in one word (0 = Unknown).
  uint64_t pack() const {
    return static_cast<uint64_t>(kind) | static_cast<uint64_t>(cfa) << 2 | uint64_t{rbp_saved} << 4 |
           uint64_t{rbp_from_rbp} << 5 | uint64_t{static_cast<uint16_t>(rbp_offset)} << 16 |
           uint64_t{static_cast<uint32_t>(cfa_offset)} << 32;
  }
  static FrameRule unpack(uint64_t bits) {
    FrameRule rule;
    rule.kind = static_cast<Kind>(bits & 3);
    rule.cfa = static_cast<Cfa>((bits >> 2) & 3);
    rule.rbp_saved = (bits >> 4) & 1;
    rule.rbp_from_rbp = (bits >> 5) & 1;
    rule.rbp_offset = static_cast<int16_t>(static_cast<uint16_t>(bits >> 16));
    rule.cfa_offset = static_cast<int32_t>(static_cast<uint32_t>(bits >> 32));
    return rule;
  }
};

// The rule for the instruction at `pc` (for a caller frame, its return address − 1).
FrameRule find_frame_rule(uintptr_t pc);

}  // namespace gpumemtrace::interpose
