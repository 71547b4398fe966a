// The layouts, GIL builds, measured on x86-64 (other LP64 Linux targets such as aarch64 align the same
// way and are expected to match, but were not measured).
//
// 3.10-3.13 were measured with offsetof()/sizeof() compiled against the internal headers of CPython
// 3.10.13, 3.11.7, 3.12.1 and 3.13.0 (pyenv builds, Py_BUILD_CORE): tests/interpose/python/layout_probe.c
// prints them, and python_layout_test.cpp checks this table against it for every installed version. The
// unicode state bits were measured the same way, by setting one bit field in a zeroed struct.
//
// 3.14 is derived from CPython 3.14's headers (pycore_interpframe_structs.h, cpython/code.h,
// cpython/unicodeobject.h, pycore_debug_offsets.h), not measured: no 3.14 is installed here. Everything
// in it that _Py_DebugOffsets also describes is compared with the running interpreter's values before
// use (check_debug_offsets), and _PyRuntimeState._finalizing is taken from there. The rest is not in
// _Py_DebugOffsets and rests on the headers: the owner values, the stack reference tag bits,
// _co_firsttraceable and the unicode state bits.
#include "interpose/stacks/python/python_layout.h"

#include <cstring>

namespace gpumemtrace::interpose::python {

namespace {

constexpr PythonLayout with_unicode(PythonLayout layout, int16_t ascii_size, int16_t compact_size,
                                    int8_t ready_shift) {
  layout.unicode_length = 16;
  layout.unicode_state = 32;
  layout.unicode_ascii_size = ascii_size;
  layout.unicode_compact_size = compact_size;
  layout.state_kind_shift = 2;
  layout.state_compact_shift = 5;
  layout.state_ascii_shift = 6;
  layout.state_ready_shift = ready_shift;
  return layout;
}

constexpr PythonLayout make_310() {
  PythonLayout l;
  l.minor = 10;
  l.chain = FrameChain::kFrameObjects;
  l.runtime_finalizing = 16;
  l.tstate_frame = 24;
  l.frame_previous = 24;  // f_back
  l.frame_code = 32;      // f_code
  l.frame_instr = 96;     // f_lasti
  l.code_filename = 104;
  l.code_name = 112;
  l.code_linetable = 120;
  l.code_firstlineno = 40;
  return with_unicode(l, 48, 72, 7);
}

constexpr PythonLayout make_311() {
  PythonLayout l;
  l.minor = 11;
  l.runtime_finalizing = 24;
  l.tstate_frame = 56;  // cframe
  l.cframe_current_frame = 8;
  l.frame_code = 32;
  l.frame_previous = 48;
  l.frame_instr = 56;  // prev_instr
  l.frame_is_entry = 68;
  l.frame_owner = 69;
  l.owner_generator = 1;
  l.code_units = 16;
  l.code_filename = 112;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_linetable = 136;
  l.code_firstlineno = 72;
  l.code_firsttraceable = 168;
  l.code_adaptive = 184;
  return with_unicode(l, 48, 72, 7);
}

constexpr PythonLayout make_312() {
  PythonLayout l;
  l.minor = 12;
  l.runtime_finalizing = 24;
  l.tstate_frame = 56;  // cframe
  l.cframe_current_frame = 0;
  l.frame_code = 0;
  l.frame_previous = 8;
  l.frame_instr = 56;  // prev_instr
  l.frame_owner = 70;
  l.owner_generator = 1;
  l.owner_first_skipped = 3;  // FRAME_OWNED_BY_CSTACK
  l.owner_entry = 3;
  l.code_units = 16;
  l.code_filename = 112;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_linetable = 136;
  l.code_firstlineno = 68;
  l.code_firsttraceable = 176;
  l.code_adaptive = 192;
  return with_unicode(l, 40, 56, -1);
}

constexpr PythonLayout make_313() {
  PythonLayout l = make_312();
  l.minor = 13;
  l.runtime_finalizing = 608;
  l.tstate_frame = 72;  // current_frame
  l.cframe_current_frame = kNoField;
  l.frame_instr = 56;  // instr_ptr
  l.check_code_type = true;
  l.code_firsttraceable = 184;
  l.code_adaptive = 200;
  return l;
}

// Derived (see the top of this file). 3.14 renumbers the owners: FRAME_OWNED_BY_INTERPRETER = 3 is what
// _PyEval_EvalFrameDefault's entry frame is owned by, FRAME_OWNED_BY_CSTACK = 4; CPython skips owner >= 3.
constexpr PythonLayout make_314() {
  PythonLayout l = make_313();
  l.minor = 14;
  l.runtime_finalizing = kNoField;  // read from _Py_DebugOffsets.runtime_state.finalizing
  l.frame_owner = 74;
  l.code_tag_bits = 3;
  l.code_firsttraceable = 192;  // after the new Py_ssize_t _co_unique_id
  l.code_adaptive = 208;
  return l;
}

constexpr PythonLayout kLayouts[] = {make_310(), make_311(), make_312(), make_313(), make_314()};

// 3.13: measured against 3.13.0's pycore_runtime.h (layout_probe.c prints them as dbg_*).
constexpr DebugOffsetsLayout kDebugOffsets313 = {
    .version = 8,
    .free_threaded = 16,
    .runtime_finalizing = 32,
    .tstate_current_frame = 184,
    .frame_previous = 232,
    .frame_executable = 240,
    .frame_instr_ptr = 248,
    .frame_owner = 264,
    .code_filename = 280,
    .code_name = 288,
    .code_qualname = 296,
    .code_linetable = 304,
    .code_firstlineno = 312,
    .code_adaptive = 344,
    .unicode_state = 544,
    .unicode_length = 552,
    .unicode_ascii_size = 560,
};

// 3.14: derived from pycore_debug_offsets.h. Every member is a uint64_t; 3.14 adds threads_main,
// code_object_generation and tlbc_generation to interpreter_state, stackpointer and tlbc_index to
// interpreter_frame, co_tlbc to code_object and set_object before dict_object. A wrong derivation makes
// the values read disagree with the table, which refuses 3.14 rather than misreading it.
constexpr DebugOffsetsLayout kDebugOffsets314 = {
    .version = 8,
    .free_threaded = 16,
    .runtime_finalizing = 32,
    .tstate_current_frame = 208,
    .frame_previous = 256,
    .frame_executable = 264,
    .frame_instr_ptr = 272,
    .frame_owner = 288,
    .code_filename = 320,
    .code_name = 328,
    .code_qualname = 336,
    .code_linetable = 344,
    .code_firstlineno = 352,
    .code_adaptive = 384,
    .unicode_state = 624,
    .unicode_length = 632,
    .unicode_ascii_size = 640,
};

uint64_t read_u64(const void* base, size_t offset) {
  uint64_t value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof value);
  return value;
}

}  // namespace

const PythonLayout* layout_for_minor(unsigned minor) {
  for (const PythonLayout& layout : kLayouts)
    if (layout.minor == minor) return &layout;
  return nullptr;
}

const DebugOffsetsLayout* debug_offsets_layout_for_minor(unsigned minor) {
  if (minor == 13) return &kDebugOffsets313;
  if (minor == 14) return &kDebugOffsets314;
  return nullptr;
}

#define DISAGREES(field) "_Py_DebugOffsets disagrees with the expected layout at " field

const char* check_debug_offsets(const PythonLayout& layout, const void* runtime, uint32_t version_hex,
                                size_t* finalizing) {
  const DebugOffsetsLayout* dbg = debug_offsets_layout_for_minor(layout.minor);
  if (!dbg) return "this build has no _Py_DebugOffsets layout for this minor version";
  if (!runtime) return "_PyRuntime not found";
  if (std::memcmp(runtime, "xdebugpy", 8) != 0) return "_PyRuntime does not start with the \"xdebugpy\" cookie";
  if (read_u64(runtime, dbg->version) != version_hex) return "_Py_DebugOffsets.version differs from Py_Version";
  if (read_u64(runtime, dbg->free_threaded) != 0) return "free-threaded build (no GIL): not supported";
  struct Expected {
    size_t where;
    int16_t value;
    const char* what;
  };
  const Expected expected[] = {
      {dbg->tstate_current_frame, layout.tstate_frame, DISAGREES("thread_state.current_frame")},
      {dbg->frame_previous, layout.frame_previous, DISAGREES("interpreter_frame.previous")},
      {dbg->frame_executable, layout.frame_code, DISAGREES("interpreter_frame.executable")},
      {dbg->frame_instr_ptr, layout.frame_instr, DISAGREES("interpreter_frame.instr_ptr")},
      {dbg->frame_owner, layout.frame_owner, DISAGREES("interpreter_frame.owner")},
      {dbg->code_filename, layout.code_filename, DISAGREES("code_object.filename")},
      {dbg->code_name, layout.code_name, DISAGREES("code_object.name")},
      {dbg->code_qualname, layout.code_qualname, DISAGREES("code_object.qualname")},
      {dbg->code_linetable, layout.code_linetable, DISAGREES("code_object.linetable")},
      {dbg->code_firstlineno, layout.code_firstlineno, DISAGREES("code_object.firstlineno")},
      {dbg->code_adaptive, layout.code_adaptive, DISAGREES("code_object.co_code_adaptive")},
      {dbg->unicode_state, layout.unicode_state, DISAGREES("unicode_object.state")},
      {dbg->unicode_length, layout.unicode_length, DISAGREES("unicode_object.length")},
      {dbg->unicode_ascii_size, layout.unicode_ascii_size, DISAGREES("unicode_object.asciiobject_size")},
  };
  static_assert(sizeof(expected) / sizeof(expected[0]) == 14);
  for (const Expected& e : expected) {
    if (e.value < 0 || read_u64(runtime, e.where) != static_cast<uint64_t>(e.value)) {
      return e.what;
    }
  }
  uint64_t runtime_finalizing = read_u64(runtime, dbg->runtime_finalizing);
  if (layout.runtime_finalizing != kNoField ? runtime_finalizing != static_cast<uint64_t>(layout.runtime_finalizing)
                                            : runtime_finalizing >= 65536) {
    return DISAGREES("runtime_state.finalizing");
  }
  *finalizing = static_cast<size_t>(runtime_finalizing);
  return nullptr;
}

#undef DISAGREES

}  // namespace gpumemtrace::interpose::python
