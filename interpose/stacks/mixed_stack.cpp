#include "interpose/stacks/mixed_stack.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <memory>
#include <new>

#include "interpose/base/real_dlsym.h"
#include "interpose/base/debug_log.h"

namespace gpumemtrace::interpose {

namespace {

using python::PythonFrame;
using python::PythonStacks;

// The tracer's own lookups go to glibc's dlsym: our exported dlsym is a hook.
void* lookup(const char* name) { return real_dlsym(RTLD_DEFAULT, name); }

CodeRange function_range(void* function) {
  Dl_info info;
  void* found = nullptr;  // the ElfW(Sym) of the symbol
  if (!function || !dladdr1(function, &info, &found, RTLD_DL_SYMENT) || !found || info.dli_saddr != function)
    return {};
  const auto* symbol = static_cast<const ElfW(Sym)*>(found);
  auto low = reinterpret_cast<uintptr_t>(function);
  return {low, low + symbol->st_size};
}

// Room for one walk, left uninitialized (8 KiB), on the heap: threads that never walk do not carry it.
union PythonWalk {
  PythonWalk() {}
  PythonFrame frames[kMaxStackDepth];
};
thread_local std::unique_ptr<PythonWalk> t_walk __attribute__((tls_model("initial-exec")));
// How many frames of t_walk the thread's last walk left there (the next walk reuses their lines).
thread_local size_t t_walked __attribute__((tls_model("initial-exec"))) = 0;

}  // namespace

ProcessPython find_process_python() {
  ProcessPython found;
  found.stacks = PythonStacks::find(&lookup);
  if (!found.stacks) {
    if (const char* why = PythonStacks::unsupported_reason())
      warn("%s: Python frames are not recorded (stacks stay native)", why);
    return found;
  }
  found.eval = function_range(lookup("_PyEval_EvalFrameDefault"));
  uint32_t v = found.stacks->version_hex();
  debug_log("Python frames: CPython %u.%u.%u, _PyEval_EvalFrameDefault at [%#lx, %#lx)", v >> 24, (v >> 16) & 0xFF,
            (v >> 8) & 0xFF, static_cast<unsigned long>(found.eval.low), static_cast<unsigned long>(found.eval.high));
  return found;
}

void capture_mixed_stack(CapturedStack& out, size_t max_depth, PythonStacks& python) {
  out.python = nullptr;
  bool native_cut = false;
  out.depth = capture_stack(out.frames, max_depth, &native_cut);
  if (!t_walk) t_walk.reset(new (std::nothrow) PythonWalk);
  if (!t_walk) return;
  PythonFrame* walk = t_walk->frames;
  // The walk reads no more frames than can be placed, but at least one: a thread without Python frames
  // keeps its native stack as it is.
  const CodeRange& eval = process_python().eval;
  std::span<const uintptr_t> native(out.frames, out.depth);
  bool one_frame_per_evaluation = python.layout().chain == python::FrameChain::kFrameObjects;
  size_t room = python_frames_room(native, native_cut, eval, one_frame_per_evaluation, max_depth);
  bool python_truncated = false;
  size_t walked = python.walk(walk, room > 0 ? room : 1, &python_truncated, t_walked);
  t_walked = walked;
  if (walked == 0) return;
  uintptr_t copy[kMaxStackDepth];
  std::copy(native.begin(), native.end(), copy);
  out.depth = splice_python_frames({copy, native.size()}, native_cut, {walk, walked}, python_truncated, eval,
                                   out.frames, max_depth);
  out.python = &python;
  out.walk = walk;
}

}  // namespace gpumemtrace::interpose
