#include "interpose/stacks/native/frame_rules.h"

#include <dlfcn.h>

#include "interpose/stacks/native/cfa_program.h"
#include "interpose/stacks/native/eh_frame.h"

namespace gpumemtrace::interpose {

namespace {

using Kind = FrameRule::Kind;
using Cfa = FrameRule::Cfa;
using cfa::RegisterRule;
using cfa::Row;

FrameRule unsupported() {
  FrameRule rule;
  rule.kind = Kind::Unsupported;
  return rule;
}

bool fits_int32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }
bool fits_int16(int64_t v) { return v >= INT16_MIN && v <= INT16_MAX; }

FrameRule rule_from_row(const Row& row) {
  using RuleKind = RegisterRule::Kind;
  if (row.return_address.kind == RuleKind::Undefined) {
    FrameRule rule;
    rule.kind = Kind::Outermost;
    return rule;
  }
  if (row.return_address.kind != RuleKind::AtCfa || row.return_address.offset != -8 || row.cfa_other) {
    return unsupported();
  }
  FrameRule rule;
  rule.kind = Kind::Step;
  if (row.cfa_deref) {
    if (row.cfa_register != cfa::kRbp) return unsupported();
    rule.cfa = Cfa::DerefRbpOffset;
  } else if (row.cfa_register == cfa::kRsp) {
    rule.cfa = Cfa::RspOffset;
  } else if (row.cfa_register == cfa::kRbp) {
    rule.cfa = Cfa::RbpOffset;
  } else {
    return unsupported();
  }
  if (!fits_int32(row.cfa_offset)) return unsupported();
  rule.cfa_offset = static_cast<int32_t>(row.cfa_offset);
  switch (row.rbp.kind) {
    case RuleKind::Same: break;
    case RuleKind::AtCfa:
    case RuleKind::AtRbp:
      if (!fits_int16(row.rbp.offset)) return unsupported();
      rule.rbp_saved = true;
      rule.rbp_from_rbp = row.rbp.kind == RuleKind::AtRbp;
      rule.rbp_offset = static_cast<int32_t>(row.rbp.offset);
      break;
    default: return unsupported();
  }
  return rule;
}

}  // namespace

FrameRule find_frame_rule(uintptr_t pc) {
#if defined(__x86_64__) && defined(DLFO_EH_SEGMENT_TYPE)
  dl_find_object object;
  if (_dl_find_object(reinterpret_cast<void*>(pc), &object) != 0 || !object.dlfo_eh_frame) return unsupported();
  eh_frame::Fde fde;
  Row row;
  if (!eh_frame::find_fde(static_cast<const uint8_t*>(object.dlfo_eh_frame), pc, fde) || !cfa::row_at(fde, pc, row)) {
    return unsupported();
  }
  return rule_from_row(row);
#else
  (void)pc;
  return unsupported();
#endif
}

}  // namespace gpumemtrace::interpose
