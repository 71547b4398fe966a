#include "interpose/stacks/native/cfa_program.h"

#include <array>

namespace gpumemtrace::interpose::cfa {

namespace {

using eh_frame::Bytes;
using eh_frame::Cie;

// Runs call frame instructions from `location`, stopping before the first row that starts after `pc`.
class CfaProgram {
 public:
  CfaProgram(const Cie& cie, const Row* initial) : cie_(cie), initial_(initial) {}

  bool run(Bytes in, uintptr_t location, uintptr_t pc, Row& row) {
    while (in.more()) {
      uint8_t op = in.u8();
      uint64_t advance = 0;
      switch (op >> 6) {
        case 1: advance = op & 0x3f; break;
        case 2:
          set(row, op & 0x3f, RegisterRule::Kind::AtCfa, factored(in.uleb()));
          continue;
        case 3: restore(row, op & 0x3f); continue;
        default: break;
      }
      if (op >> 6 == 0 && !instruction(op, in, row, advance)) return false;
      if (advance) {
        location += advance * cie_.code_align;
        if (location > pc) return true;
      }
    }
    return in.ok();
  }

 private:
  bool instruction(uint8_t op, Bytes& in, Row& row, uint64_t& advance) {
    using RuleKind = RegisterRule::Kind;
    switch (op) {
      case 0x00: return true;                                // nop
      case 0x02: advance = in.u8(); return true;             // advance_loc1
      case 0x03: advance = in.fixed<uint16_t>(); return true;  // advance_loc2
      case 0x04: advance = in.fixed<uint32_t>(); return true;  // advance_loc4
      case 0x05: {  // offset_extended
        uint64_t reg = in.uleb();
        set(row, reg, RuleKind::AtCfa, factored(in.uleb()));
        return true;
      }
      case 0x06: restore(row, in.uleb()); return true;  // restore_extended
      case 0x07: set(row, in.uleb(), RuleKind::Undefined, 0); return true;
      case 0x08: set(row, in.uleb(), RuleKind::Same, 0); return true;
      case 0x09: {  // register: another register holds it
        uint64_t reg = in.uleb();
        in.uleb();
        set(row, reg, RuleKind::Other, 0);
        return true;
      }
      case 0x0a:  // remember_state
        if (depth_ == saved_.size()) return false;
        saved_[depth_++] = row;
        return true;
      case 0x0b:  // restore_state
        if (depth_ == 0) return false;
        row = saved_[--depth_];
        return true;
      case 0x0c:  // def_cfa
        row.cfa_register = in.uleb();
        row.cfa_offset = static_cast<int64_t>(in.uleb());
        row.cfa_deref = row.cfa_other = false;
        return true;
      case 0x0d: row.cfa_register = in.uleb(); row.cfa_deref = row.cfa_other = false; return true;
      case 0x0e: row.cfa_offset = static_cast<int64_t>(in.uleb()); return true;
      case 0x0f: def_cfa_expression(in, row); return true;
      case 0x10: expression(in, row); return true;
      case 0x11: {  // offset_extended_sf
        uint64_t reg = in.uleb();
        set(row, reg, RuleKind::AtCfa, factored(static_cast<uint64_t>(in.sleb())));
        return true;
      }
      case 0x12:  // def_cfa_sf
        row.cfa_register = in.uleb();
        row.cfa_offset = factored(static_cast<uint64_t>(in.sleb()));
        row.cfa_deref = row.cfa_other = false;
        return true;
      case 0x13: row.cfa_offset = factored(static_cast<uint64_t>(in.sleb())); return true;
      case 0x14:  // val_offset
      case 0x15: {  // val_offset_sf
        uint64_t reg = in.uleb();
        in.uleb();
        set(row, reg, RuleKind::Other, 0);
        return true;
      }
      case 0x16: {  // val_expression
        uint64_t reg = in.uleb();
        in.skip(in.uleb());
        set(row, reg, RuleKind::Other, 0);
        return true;
      }
      case 0x2e: in.uleb(); return true;  // GNU_args_size
      case 0x2f: {                        // GNU_negative_offset_extended
        uint64_t reg = in.uleb();
        set(row, reg, RuleKind::AtCfa, -factored(in.uleb()));
        return true;
      }
      default: return false;  // set_loc and vendor extensions
    }
  }

  // CFA = *(rbp + N) is the one expression compilers emit for ordinary code (stack realignment).
  void def_cfa_expression(Bytes& in, Row& row) {
    Bytes expression = in.sub(in.uleb());
    row.cfa_other = true;
    if (expression.u8() != 0x76) return;  // DW_OP_breg6 (rbp)
    int64_t offset = expression.sleb();
    if (expression.u8() != 0x06 || expression.more() || !expression.ok()) return;  // DW_OP_deref, nothing after
    row.cfa_register = kRbp;
    row.cfa_offset = offset;
    row.cfa_deref = true;
    row.cfa_other = false;
  }

  // rbp saved at rbp + N (after a stack realignment) is understood; any other expression is not.
  void expression(Bytes& in, Row& row) {
    uint64_t reg = in.uleb();
    Bytes expression = in.sub(in.uleb());
    if (reg == kRbp && expression.u8() == 0x76) {
      int64_t offset = expression.sleb();
      if (!expression.more() && expression.ok()) {
        set(row, reg, RegisterRule::Kind::AtRbp, offset);
        return;
      }
    }
    set(row, reg, RegisterRule::Kind::Other, 0);
  }

  // A factored offset times the data alignment, wrapping as two's complement: tables from a damaged object
  // give a wrong rule (which the walker's checks reject), never undefined behaviour.
  int64_t factored(uint64_t value) const { return static_cast<int64_t>(value * static_cast<uint64_t>(cie_.data_align)); }

  void set(Row& row, uint64_t reg, RegisterRule::Kind kind, int64_t offset) {
    if (RegisterRule* rule = row.rule(reg)) *rule = {kind, offset};
  }
  void restore(Row& row, uint64_t reg) {
    RegisterRule* rule = row.rule(reg);
    if (!rule) return;
    *rule = initial_ ? *initial_->rule(reg) : RegisterRule{};
  }

  const Cie& cie_;
  const Row* initial_;
  std::array<Row, 8> saved_;
  size_t depth_ = 0;
};

}  // namespace

bool row_at(const eh_frame::Fde& fde, uintptr_t pc, Row& row) {
  Row initial;
  if (!CfaProgram(fde.cie, nullptr).run(fde.cie.instructions, 0, UINTPTR_MAX, initial)) return false;
  row = initial;
  return CfaProgram(fde.cie, &initial).run(fde.instructions, fde.begin, pc, row);
}

}  // namespace gpumemtrace::interpose::cfa
