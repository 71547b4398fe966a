// Prints, as "key=value" lines, the CPython layout facts the frame walker depends on, measured with
// offsetof() against the internal headers of the CPython this file is compiled against. The test
// (python_layout_test.cpp) compares them with the constants in interpose/stacks/python/python_layout.cpp,
// so a table that drifts from the headers it claims to describe fails.
//
// Compiled once per installed interpreter (tests/interpose/python/CMakeLists.txt), with -DPy_BUILD_CORE
// and that interpreter's include/python3.X and include/python3.X/internal on the include path. Never
// linked against libpython: nothing here is called, only measured.
#define Py_BUILD_CORE 1
#include <Python.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal/pycore_runtime.h"
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#else
#include "internal/pycore_code.h"
#include "internal/pycore_frame.h"
#endif

#define SHOW(key, value) printf("%s=%ld\n", key, (long)(value))

// The bit position of a one-bit-or-wider field of PyASCIIObject.state, found by setting it to 1 in an
// otherwise zero word.
static int state_shift(unsigned int word) {
  for (int bit = 0; bit < 32; ++bit)
    if (word == (1u << bit)) return bit;
  return -1;
}

int main(void) {
  SHOW("minor", PY_MINOR_VERSION);
  SHOW("ob_type", offsetof(PyObject, ob_type));
  SHOW("runtime_finalizing", offsetof(_PyRuntimeState, _finalizing));

#if PY_VERSION_HEX < 0x030B0000
  SHOW("tstate_frame", offsetof(PyThreadState, frame));
  SHOW("cframe_current_frame", -1);
  SHOW("frame_previous", offsetof(PyFrameObject, f_back));
  SHOW("frame_code", offsetof(PyFrameObject, f_code));
  SHOW("frame_instr", offsetof(PyFrameObject, f_lasti));
  SHOW("frame_lasti_size", sizeof(((PyFrameObject*)0)->f_lasti));
  SHOW("frame_is_entry", -1);
  SHOW("frame_owner", -1);
  SHOW("owner_generator", -1);
  SHOW("owner_first_skipped", -1);
  SHOW("owner_entry", -1);
  SHOW("code_units", -1);
  SHOW("code_qualname", -1);
  SHOW("code_firsttraceable", -1);
  SHOW("code_adaptive", -1);
#else
#if PY_VERSION_HEX < 0x030D0000
  SHOW("tstate_frame", offsetof(PyThreadState, cframe));
  SHOW("cframe_current_frame", offsetof(_PyCFrame, current_frame));
  SHOW("frame_code", offsetof(_PyInterpreterFrame, f_code));
  SHOW("frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
#else
  SHOW("tstate_frame", offsetof(PyThreadState, current_frame));
  SHOW("cframe_current_frame", -1);
  SHOW("frame_code", offsetof(_PyInterpreterFrame, f_executable));
  SHOW("frame_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#endif
  SHOW("frame_previous", offsetof(_PyInterpreterFrame, previous));
#if PY_VERSION_HEX < 0x030C0000
  SHOW("frame_is_entry", offsetof(_PyInterpreterFrame, is_entry));
#else
  SHOW("frame_is_entry", -1);
#endif
  SHOW("frame_owner", offsetof(_PyInterpreterFrame, owner));
  SHOW("owner_generator", FRAME_OWNED_BY_GENERATOR);
#if PY_VERSION_HEX >= 0x030E0000
  // 3.14: FRAME_OWNED_BY_INTERPRETER (3, the entry frame) and FRAME_OWNED_BY_CSTACK (4) are skipped.
  SHOW("owner_first_skipped", FRAME_OWNED_BY_INTERPRETER);
  SHOW("owner_entry", FRAME_OWNED_BY_INTERPRETER);
#elif PY_VERSION_HEX >= 0x030C0000
  // 3.12, 3.13: FRAME_OWNED_BY_CSTACK, the last enumerator, owns the entry frame.
  SHOW("owner_first_skipped", FRAME_OWNED_BY_CSTACK);
  SHOW("owner_entry", FRAME_OWNED_BY_CSTACK);
#else
  SHOW("owner_first_skipped", -1);
  SHOW("owner_entry", -1);
#endif
  SHOW("code_units", offsetof(PyVarObject, ob_size));
  SHOW("code_qualname", offsetof(PyCodeObject, co_qualname));
  SHOW("code_firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
  SHOW("code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
  SHOW("codeunit_size", sizeof(_Py_CODEUNIT));
#endif
  SHOW("code_filename", offsetof(PyCodeObject, co_filename));
  SHOW("code_name", offsetof(PyCodeObject, co_name));
  SHOW("code_linetable", offsetof(PyCodeObject, co_linetable));
  SHOW("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));

  SHOW("unicode_length", offsetof(PyASCIIObject, length));
  SHOW("unicode_state", offsetof(PyASCIIObject, state));
  SHOW("unicode_ascii_size", sizeof(PyASCIIObject));
  SHOW("unicode_compact_size", sizeof(PyCompactUnicodeObject));
  {
    PyASCIIObject o;
    unsigned int word;
    memset(&o, 0, sizeof o);
    o.state.kind = 1;
    memcpy(&word, &o.state, sizeof word);
    SHOW("state_kind_shift", state_shift(word));
    memset(&o, 0, sizeof o);
    o.state.compact = 1;
    memcpy(&word, &o.state, sizeof word);
    SHOW("state_compact_shift", state_shift(word));
    memset(&o, 0, sizeof o);
    o.state.ascii = 1;
    memcpy(&word, &o.state, sizeof word);
    SHOW("state_ascii_shift", state_shift(word));
#if PY_VERSION_HEX < 0x030C0000
    memset(&o, 0, sizeof o);
    o.state.ready = 1;
    memcpy(&word, &o.state, sizeof word);
    SHOW("state_ready_shift", state_shift(word));
#else
    SHOW("state_ready_shift", -1);
#endif
  }

#if PY_VERSION_HEX >= 0x030D0000
  SHOW("runtime_debug_offsets", offsetof(_PyRuntimeState, debug_offsets));
  SHOW("dbg_version", offsetof(_Py_DebugOffsets, version));
  SHOW("dbg_free_threaded", offsetof(_Py_DebugOffsets, free_threaded));
  SHOW("dbg_runtime_finalizing", offsetof(_Py_DebugOffsets, runtime_state.finalizing));
  SHOW("dbg_tstate_current_frame", offsetof(_Py_DebugOffsets, thread_state.current_frame));
  SHOW("dbg_frame_previous", offsetof(_Py_DebugOffsets, interpreter_frame.previous));
  SHOW("dbg_frame_executable", offsetof(_Py_DebugOffsets, interpreter_frame.executable));
  SHOW("dbg_frame_instr_ptr", offsetof(_Py_DebugOffsets, interpreter_frame.instr_ptr));
  SHOW("dbg_frame_owner", offsetof(_Py_DebugOffsets, interpreter_frame.owner));
  SHOW("dbg_code_filename", offsetof(_Py_DebugOffsets, code_object.filename));
  SHOW("dbg_code_name", offsetof(_Py_DebugOffsets, code_object.name));
  SHOW("dbg_code_qualname", offsetof(_Py_DebugOffsets, code_object.qualname));
  SHOW("dbg_code_linetable", offsetof(_Py_DebugOffsets, code_object.linetable));
  SHOW("dbg_code_firstlineno", offsetof(_Py_DebugOffsets, code_object.firstlineno));
  SHOW("dbg_code_adaptive", offsetof(_Py_DebugOffsets, code_object.co_code_adaptive));
  SHOW("dbg_unicode_state", offsetof(_Py_DebugOffsets, unicode_object.state));
  SHOW("dbg_unicode_length", offsetof(_Py_DebugOffsets, unicode_object.length));
  SHOW("dbg_unicode_ascii_size", offsetof(_Py_DebugOffsets, unicode_object.asciiobject_size));
#endif
  return 0;
}
