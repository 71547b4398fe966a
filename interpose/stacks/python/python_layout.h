// Where CPython keeps what the frame walker reads, per minor version: the thread state's current frame,
// the frame chain, the code object's names and line table, and compact unicode strings. No Python
// header is included anywhere in the tracer: these are constants, measured once (python_layout.cpp says
// how) and checked against the headers by tests/interpose/python/python_layout_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpumemtrace::interpose::python {

inline constexpr int16_t kNoField = -1;

enum class FrameChain : uint8_t {
  kFrameObjects,       // 3.10: PyFrameObject, tstate->frame → f_back; f_lasti counts code units
  kInterpreterFrames,  // 3.11+: _PyInterpreterFrame, previous; the instruction is a pointer into the code
};

struct PythonLayout {
  unsigned minor = 0;  // 3.<minor>
  FrameChain chain = FrameChain::kInterpreterFrames;

  // _PyRuntimeState._finalizing: the thread state of the thread finalizing the interpreter, or null.
  // 3.14: kNoField, taken from _Py_DebugOffsets at run time.
  int16_t runtime_finalizing = kNoField;

  // PyThreadState: the innermost frame, directly (3.10 frame, 3.13+ current_frame) or through the
  // _PyCFrame that tstate->cframe points to (3.11, 3.12: cframe_current_frame is then its offset).
  int16_t tstate_frame = kNoField;
  int16_t cframe_current_frame = kNoField;

  // The frame.
  int16_t frame_previous = kNoField;  // f_back (3.10), previous
  int16_t frame_code = kNoField;      // f_code; 3.13+ f_executable (any object; 3.14 a tagged reference)
  int16_t frame_instr = kNoField;     // 3.10 f_lasti (int); 3.11/3.12 prev_instr; 3.13+ instr_ptr
  int16_t frame_is_entry = kNoField;  // 3.11 only: bool, the first frame of a _PyEval_EvalFrameDefault call
  int16_t frame_owner = kNoField;     // 3.11+: char, enum _frameowner
  uintptr_t code_tag_bits = 0;        // 3.14: low bits of f_executable (a _PyStackRef) that are tags
  bool check_code_type = false;       // 3.13+: f_executable must be checked to be a code object

  // enum _frameowner values.
  int8_t owner_generator = -1;      // FRAME_OWNED_BY_GENERATOR: never incomplete
  int8_t owner_first_skipped = -1;  // 3.12+: owners >= this are not Python frames (shim/entry frames)
  int8_t owner_entry = -1;          // 3.12+: the owner of the frame _PyEval_EvalFrameDefault pushes
                                    // below the first frame it evaluates

  // The code object.
  int16_t code_units = kNoField;  // 3.11+: ob_size, the bytecode's length in code units
  int16_t code_filename = kNoField;
  int16_t code_name = kNoField;
  int16_t code_qualname = kNoField;  // 3.11+ (3.10 code objects have no qualified name)
  int16_t code_linetable = kNoField;
  int16_t code_firstlineno = kNoField;     // int
  int16_t code_firsttraceable = kNoField;  // 3.11+: int, index of the first traceable instruction
  int16_t code_adaptive = kNoField;        // 3.11+: co_code_adaptive, the bytecode (code units of 2 bytes)

  // PyASCIIObject / PyCompactUnicodeObject.
  int16_t ob_type = 8;
  int16_t unicode_length = kNoField;        // Py_ssize_t, in code points
  int16_t unicode_state = kNoField;         // the state bit field (a 32-bit word)
  int16_t unicode_ascii_size = kNoField;    // sizeof(PyASCIIObject): compact ASCII data follows
  int16_t unicode_compact_size = kNoField;  // sizeof(PyCompactUnicodeObject): other compact data follows
  int8_t state_kind_shift = -1;             // 3 bits: 1, 2 or 4 bytes per code point
  int8_t state_compact_shift = -1;
  int8_t state_ascii_shift = -1;
  int8_t state_ready_shift = -1;  // 3.10, 3.11 only
};

// The layout of CPython 3.<minor>, or nullptr when this build knows none (older than 3.10, newer than
// 3.14). 3.14's is derived, not measured: it is only used after check_debug_offsets() agreed.
const PythonLayout* layout_for_minor(unsigned minor);

// Where _Py_DebugOffsets (the first member of _PyRuntime, 3.13+) keeps the values the walker relies on.
// The struct's own layout changes between minor versions.
struct DebugOffsetsLayout {
  size_t version = 0;  // uint64 PY_VERSION_HEX
  size_t free_threaded = 0;
  size_t runtime_finalizing = 0;
  size_t tstate_current_frame = 0;
  size_t frame_previous = 0;
  size_t frame_executable = 0;
  size_t frame_instr_ptr = 0;
  size_t frame_owner = 0;
  size_t code_filename = 0;
  size_t code_name = 0;
  size_t code_qualname = 0;
  size_t code_linetable = 0;
  size_t code_firstlineno = 0;
  size_t code_adaptive = 0;
  size_t unicode_state = 0;
  size_t unicode_length = 0;
  size_t unicode_ascii_size = 0;
};

// nullptr before 3.13 (no _Py_DebugOffsets) and for minors this build does not know.
const DebugOffsetsLayout* debug_offsets_layout_for_minor(unsigned minor);

// Checks `layout` against the _Py_DebugOffsets at `runtime` (the address of _PyRuntime) of CPython
// `version_hex`. Returns nullptr when they agree, else why not (a static string): no cookie, another
// version, a free-threaded build, or an offset that differs. On success `*finalizing` is the offset of
// _PyRuntimeState._finalizing (the table's, or, where the table has none, the interpreter's).
const char* check_debug_offsets(const PythonLayout& layout, const void* runtime, uint32_t version_hex,
                                size_t* finalizing);

}  // namespace gpumemtrace::interpose::python
