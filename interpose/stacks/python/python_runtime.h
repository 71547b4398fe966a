// Finding the CPython of this process at run time, by symbol name: no Python header, no link with
// libpython, so a process without Python pays one failed lookup.
#pragma once

#include <cstdint>

#include "interpose/stacks/python/python_layout.h"

namespace gpumemtrace::interpose::python {

// Resolves a global symbol of the process (nullptr when absent). The default is dlsym(RTLD_DEFAULT, ...);
// the preload library may pass its own (its exported dlsym is a hook).
using SymbolLookup = void* (*)(const char* name);

// What the walker uses of the interpreter.
struct PythonRuntime {
  uint32_t version_hex = 0;  // PY_VERSION_HEX, e.g. 0x030C01F0 for 3.12.1
  const PythonLayout* layout = nullptr;
  void* (*this_thread_state)() = nullptr;        // PyGILState_GetThisThreadState: a TSS read, GIL-free
  int (*addr2line)(void* code, int byte_offset) = nullptr;  // PyCode_Addr2Line: reads co_linetable only
  const void* code_type = nullptr;     // &PyCode_Type
  const void* unicode_type = nullptr;  // &PyUnicode_Type
  const void* runtime = nullptr;       // &_PyRuntime (3.13+: starts with _Py_DebugOffsets)
  const void* finalizing = nullptr;    // &_PyRuntime._finalizing (a PyThreadState*), or null if unknown
};

enum class RuntimeStatus : uint8_t {
  kAbsent,       // no CPython in the process
  kUnsupported,  // a CPython whose frames this build cannot read; `reason` says why
  kSupported,
};

struct RuntimeProbe {
  RuntimeStatus status = RuntimeStatus::kAbsent;
  PythonRuntime runtime;
  char reason[192] = {};  // for kUnsupported, meant to be logged once
};

// Looks the interpreter up (uncached: PythonStacks::find caches it). The version comes from Py_Version
// (3.11+) or the text of Py_GetVersion() (3.10); 3.13+ is checked against _Py_DebugOffsets.
RuntimeProbe probe_runtime(SymbolLookup lookup);

// "3.10.13 (main, ...)" → 0x030A0DF0 (a final release); 0 when it does not start with a version.
uint32_t parse_version_text(const char* text);

}  // namespace gpumemtrace::interpose::python
