// The calling thread's Python frames, read from inside a native hook without the GIL (CPython 3.10-3.13,
// and 3.14 when its _Py_DebugOffsets agree with the expected layout).
//
// Why this is safe without the GIL: only the thread itself pushes and pops its frames, and it is busy
// calling us; the code object of an executing frame is kept alive by the frame, and code objects are
// immutable in everything read here (names, first line, line table; the bytecode is only used as the
// base address of the instruction pointer). Nothing here allocates, takes a lock, touches a reference
// count or calls an API that does (PyThreadState_GetFrame, PyFrame_GetCode, PyUnicode_AsUTF8 all do).
// The only CPython functions called are PyGILState_GetThisThreadState (a thread-specific-storage read)
// and PyCode_Addr2Line (reads the line table), both GIL-free in practice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "interpose/stacks/python/python_layout.h"
#include "interpose/stacks/python/python_line_cache.h"
#include "interpose/stacks/python/python_runtime.h"

namespace gpumemtrace::interpose::python {

// A call of _PyEval_EvalFrameDefault began its evaluation at this frame: it is the outermost Python frame
// of one native _PyEval_EvalFrameDefault frame, where the native stack resumes. 3.10: every frame (each
// is its own call); 3.11: the frame's is_entry; 3.12+: the frame just inside the entry frame that the
// call pushes (owner FRAME_OWNED_BY_CSTACK, 3.14 FRAME_OWNED_BY_INTERPRETER).
inline constexpr uint32_t kFrameEntry = 1u << 0;

struct PythonFrame {
  const void* code = nullptr;  // the code object; an identity, valid while the frame runs (see describe)
  int32_t line = -1;           // source line of the instruction being executed, -1 if unknown
  int32_t lasti = -1;          // the instruction as CPython counts it for lines (f_lasti, 3.11+
                               // _PyInterpreterFrame_LASTI), in code units; -1 before the first
  uint32_t flags = 0;          // kFrameEntry
  LineKey line_key;            // what `line` was looked up by (code 0 when it was not)
};

// What tells two code objects apart when one may have been freed and another allocated at its address.
// Code objects are immutable, and the objects below are strong references held for the code object's
// whole life, so they cannot change while it lives. A successor at the same address matches only if it
// also has the same first line and its file name, qualified name and line table sit at the very same
// addresses. The file name is usually shared by every code object of a module and the qualified name is
// interned, so those two alone would match a new code object for the same function (harmless: it
// describes the same thing); the line table is a bytes object of each code object's own, so a
// successor with different line numbers (a reloaded, edited module) differs there.
struct CodeIdentity {
  const void* filename = nullptr;
  const void* qualname = nullptr;  // 3.10: co_name (3.10 has no co_qualname)
  const void* linetable = nullptr;
  int32_t first_line = 0;
  bool operator==(const CodeIdentity&) const = default;
};

struct CodeInfo {
  std::string filename;  // UTF-8; empty if unreadable
  std::string qualname;  // "Class.method", "outer.<locals>.inner"; 3.10: the plain name
  std::string name;
  int32_t first_line = 0;
  CodeIdentity identity;
};

class PythonStacks {
 public:
  // The process's CPython, or nullptr when there is none or its frames cannot be read (then
  // unsupported_reason() says why). Thread safe; the first call looks the interpreter up (with `lookup`,
  // default dlsym(RTLD_DEFAULT, ...)), later calls cost one load and ignore `lookup`. An interpreter
  // loaded after the first call is not seen.
  static PythonStacks* find(SymbolLookup lookup = nullptr);
  // Why find() returned nullptr though the process has a CPython (log it once); nullptr otherwise.
  static const char* unsupported_reason();

  explicit PythonStacks(const PythonRuntime& runtime);

  // The calling thread's frames, innermost first, at most `max` of them; `*truncated` (when given) tells
  // whether more exist (the outermost are dropped). 0 frames for a thread Python never saw, and for any
  // thread but the finalizing one once interpreter finalization has begun.
  // `previous`: how many frames `out` already holds from this thread's last walk into it. A frame found
  // at the same place with the same line key (code object, line table, first line, instruction) takes
  // its line from there instead of the line cache (the line cache's key, so the line it would give); a
  // steady loop looks up no line at all.
  size_t walk(PythonFrame* out, size_t max, bool* truncated = nullptr, size_t previous = 0);

  // The code object's names and first line. Call it while the code object is known alive: during the
  // hook that walked it, on that thread (a frame's code object lives as long as the frame runs).
  CodeInfo describe(const void* code) const;
  CodeIdentity identity(const void* code) const;
  // Whether `code` is the code object `id` was taken from (see CodeIdentity); same liveness rule.
  bool same_code(const void* code, const CodeIdentity& id) const { return identity(code) == id; }

  uint32_t version_hex() const { return runtime_.version_hex; }
  const PythonLayout& layout() const { return *runtime_.layout; }

 private:
  bool finalizing_elsewhere(const void* tstate) const;
  size_t walk_frame_objects(const char* tstate, PythonFrame* out, size_t max, bool* truncated, size_t previous);
  size_t walk_interpreter_frames(const char* tstate, PythonFrame* out, size_t max, bool* truncated,
                                 size_t previous);
  // The frame's line, and in `*key` what it was looked up by (code 0 if it was not).
  int32_t line_of(const char* code, int64_t lasti, const PythonFrame* previous, LineKey* key);

  PythonRuntime runtime_;
  LineCache lines_;
};

}  // namespace gpumemtrace::interpose::python
