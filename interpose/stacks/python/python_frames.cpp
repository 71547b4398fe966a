#include "interpose/stacks/python/python_frames.h"

#include <dlfcn.h>

#include <cstring>
#include <type_traits>

#include "interpose/stacks/python/python_unicode.h"

namespace gpumemtrace::interpose::python {

namespace {

template <typename T>
T at(const char* base, int16_t offset) {
  T value;
  std::memcpy(&value, base + offset, sizeof value);
  return value;
}

const char* ptr_at(const char* base, int16_t offset) { return at<const char*>(base, offset); }

void* default_lookup(const char* name) { return dlsym(RTLD_DEFAULT, name); }

// Hooks may run during exit(): the instance must have no destructor to run, and none is registered.
static_assert(std::is_trivially_destructible_v<PythonStacks>);

struct Found {
  PythonStacks* stacks = nullptr;
  RuntimeProbe probe;
};

Found look_up(SymbolLookup lookup) {
  Found found;
  found.probe = probe_runtime(lookup ? lookup : default_lookup);
  if (found.probe.status == RuntimeStatus::kSupported) {
    static PythonStacks stacks(found.probe.runtime);  // static storage, no allocation; trivially destroyed
    found.stacks = &stacks;
  }
  return found;
}

const Found& found(SymbolLookup lookup) {
  static const Found found = look_up(lookup);
  return found;
}

}  // namespace

PythonStacks* PythonStacks::find(SymbolLookup lookup) { return found(lookup).stacks; }

const char* PythonStacks::unsupported_reason() {
  const Found& f = found(nullptr);
  return f.probe.status == RuntimeStatus::kUnsupported ? f.probe.reason : nullptr;
}

PythonStacks::PythonStacks(const PythonRuntime& runtime) : runtime_(runtime) {}

// While another thread finalizes the interpreter, this thread's state and frame memory may be freed under
// it (daemon threads still in native code, such as PyTorch's pin-memory thread, are not waited for and
// their states are deleted): walk nothing then. The finalizing thread itself walks as usual.
bool PythonStacks::finalizing_elsewhere(const void* tstate) const {
  if (!runtime_.finalizing) return false;
  const void* finalizing = __atomic_load_n(static_cast<const void* const*>(runtime_.finalizing), __ATOMIC_ACQUIRE);
  return finalizing && finalizing != tstate;
}

size_t PythonStacks::walk(PythonFrame* out, size_t max, bool* truncated, size_t previous) {
  bool cut = false;
  size_t n = 0;
  const char* tstate = static_cast<const char*>(runtime_.this_thread_state());
  if (tstate && !finalizing_elsewhere(tstate)) {
    n = layout().chain == FrameChain::kFrameObjects ? walk_frame_objects(tstate, out, max, &cut, previous)
                                                    : walk_interpreter_frames(tstate, out, max, &cut, previous);
  }
  if (truncated) *truncated = cut;
  return n;
}

// 3.10: tstate->frame, then f_back. Every frame object is evaluated by its own _PyEval_EvalFrameDefault
// call (generators included), and f_lasti is the current instruction's index (updated before each one).
size_t PythonStacks::walk_frame_objects(const char* tstate, PythonFrame* out, size_t max, bool* truncated,
                                        size_t previous) {
  const PythonLayout& l = layout();
  size_t n = 0;
  for (const char* frame = ptr_at(tstate, l.tstate_frame); frame; frame = ptr_at(frame, l.frame_previous)) {
    const char* code = ptr_at(frame, l.frame_code);
    if (!code) continue;
    if (n == max) {
      *truncated = true;
      break;
    }
    int32_t lasti = at<int32_t>(frame, l.frame_instr);
    LineKey key;
    int32_t line = line_of(code, lasti, n < previous ? &out[n] : nullptr, &key);
    out[n] = PythonFrame{code, line, lasti < 0 ? -1 : lasti, kFrameEntry, key};
    ++n;
  }
  return n;
}

// 3.11+: the _PyInterpreterFrame chain. Skipped, as CPython's own frame walkers skip them:
//  - 3.12+ frames owned by the C stack or the interpreter (owner >= 3): the entry frame each
//    _PyEval_EvalFrameDefault call pushes below the first frame it evaluates (its owner is owner_entry:
//    the frame just inside it is where that evaluation began), and on 3.14 other C-stack frames;
//  - frames not owned by a generator whose instruction is before _co_firsttraceable: a frame pushed but
//    not yet at its RESUME, and 3.13+'s __init__ shim (the _Py_InitCleanup trampoline, owned by the
//    thread, whose _co_firsttraceable is past its end).
// 3.13+ f_executable may hold a non-code object; such frames are skipped too.
size_t PythonStacks::walk_interpreter_frames(const char* tstate, PythonFrame* out, size_t max, bool* truncated,
                                             size_t previous) {
  const PythonLayout& l = layout();
  const char* frame = ptr_at(tstate, l.tstate_frame);
  if (l.cframe_current_frame != kNoField && frame) frame = ptr_at(frame, l.cframe_current_frame);
  size_t n = 0;
  bool inner_emitted = false;  // the frame just inside this one in the chain is out[n - 1]
  for (; frame; frame = ptr_at(frame, l.frame_previous)) {
    bool emitted_before = inner_emitted;
    inner_emitted = false;
    auto owner = at<uint8_t>(frame, l.frame_owner);
    if (l.owner_first_skipped >= 0 && owner >= l.owner_first_skipped) {
      if (owner == l.owner_entry && emitted_before) out[n - 1].flags |= kFrameEntry;
      continue;
    }
    const char* code = reinterpret_cast<const char*>(at<uintptr_t>(frame, l.frame_code) & ~l.code_tag_bits);
    if (!code) continue;
    if (l.check_code_type && ptr_at(code, l.ob_type) != runtime_.code_type) continue;
    // prev_instr (3.11, 3.12) and instr_ptr (3.13+) both give _PyInterpreterFrame_LASTI this way.
    auto instr = reinterpret_cast<intptr_t>(ptr_at(frame, l.frame_instr));
    int64_t lasti = (instr - reinterpret_cast<intptr_t>(code + l.code_adaptive)) / 2;
    if (owner != l.owner_generator && lasti < at<int32_t>(code, l.code_firsttraceable)) continue;
    if (n == max) {  // only now: a skipped entry frame above may still have marked out[max - 1]
      *truncated = true;
      break;
    }
    uint32_t flags = l.frame_is_entry != kNoField && at<uint8_t>(frame, l.frame_is_entry) ? kFrameEntry : 0;
    LineKey key;
    int32_t line = line_of(code, lasti, n < previous ? &out[n] : nullptr, &key);
    out[n] = PythonFrame{code, line, lasti < 0 ? -1 : static_cast<int32_t>(lasti), flags, key};
    ++n;
    inner_emitted = true;
  }
  return n;
}

// `previous`, when given, is the frame found at this place by the thread's last walk: the same key as the
// line cache's gives the same line without a lookup.
int32_t PythonStacks::line_of(const char* code, int64_t lasti, const PythonFrame* previous, LineKey* key_out) {
  const PythonLayout& l = layout();
  int32_t first_line = at<int32_t>(code, l.code_firstlineno);
  if (lasti < 0) return first_line;  // what PyCode_Addr2Line answers too
  if (l.code_units != kNoField && lasti >= at<int64_t>(code, l.code_units)) return -1;
  if (lasti > INT32_MAX / 2) return -1;
  LineKey key{reinterpret_cast<uintptr_t>(code), at<uintptr_t>(code, l.code_linetable), first_line,
              static_cast<int32_t>(lasti)};
  *key_out = key;
  if (previous && previous->line_key == key) return previous->line;
  int32_t line;
  if (lines_.lookup(key, &line)) return line;
  line = runtime_.addr2line(const_cast<char*>(code), key.lasti * 2);  // the argument is a byte offset
  lines_.store(key, line);
  return line;
}

CodeIdentity PythonStacks::identity(const void* code_object) const {
  const PythonLayout& l = layout();
  const char* code = static_cast<const char*>(code_object);
  CodeIdentity id;
  if (!code) return id;
  id.filename = ptr_at(code, l.code_filename);
  id.qualname = ptr_at(code, l.code_qualname != kNoField ? l.code_qualname : l.code_name);
  id.linetable = ptr_at(code, l.code_linetable);
  id.first_line = at<int32_t>(code, l.code_firstlineno);
  return id;
}

CodeInfo PythonStacks::describe(const void* code_object) const {
  const PythonLayout& l = layout();
  const char* code = static_cast<const char*>(code_object);
  CodeInfo info;
  if (!code) return info;
  info.identity = identity(code);
  info.first_line = info.identity.first_line;
  append_utf8(l, ptr_at(code, l.code_filename), runtime_.unicode_type, &info.filename);
  append_utf8(l, ptr_at(code, l.code_name), runtime_.unicode_type, &info.name);
  if (l.code_qualname != kNoField)
    append_utf8(l, ptr_at(code, l.code_qualname), runtime_.unicode_type, &info.qualname);
  else
    info.qualname = info.name;
  return info;
}

}  // namespace gpumemtrace::interpose::python
