// A shared library the test scripts load with ctypes.CDLL, which releases the GIL around each call: the
// situation of a native hook. It walks the calling thread's Python frames with PythonStacks and writes
// them as text, one frame a line, innermost first:
//     <file>:<line> in <qualified name>[ [entry]]
// followed by a line "[truncated]" when more frames exist than were asked for.
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "interpose/stacks/python/python_frames.h"

using gpumemtrace::interpose::python::kFrameEntry;
using gpumemtrace::interpose::python::PythonFrame;
using gpumemtrace::interpose::python::PythonStacks;

namespace {

constexpr size_t kMaxFrames = 1024;

void copy_out(const std::string& text, char* buf, size_t cap) {
  if (cap == 0) return;
  size_t n = std::min(text.size(), cap - 1);
  std::memcpy(buf, text.data(), n);
  buf[n] = '\0';
}

std::string format(PythonStacks& stacks, const PythonFrame* frames, size_t count, bool truncated) {
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    auto info = stacks.describe(frames[i].code);
    text += info.filename + ":" + std::to_string(frames[i].line) + " in " + info.qualname;
    if (frames[i].flags & kFrameEntry) text += " [entry]";
    text += "\n";
  }
  if (truncated) text += "[truncated]\n";
  return text;
}

double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

}  // namespace

extern "C" {

// 1 and the version ("3.12.1") when frames can be read, 0 when the process has no CPython, -1 and the
// reason when it has one that is not supported.
__attribute__((visibility("default"))) int gmt_probe_status(char* buf, size_t cap) {
  PythonStacks* stacks = PythonStacks::find();
  if (!stacks) {
    const char* reason = PythonStacks::unsupported_reason();
    copy_out(reason ? reason : "", buf, cap);
    return reason ? -1 : 0;
  }
  uint32_t v = stacks->version_hex();
  copy_out(std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 0xFF) + "." + std::to_string((v >> 8) & 0xFF),
           buf, cap);
  return 1;
}

// The frames as text (see the top); returns their number, or -1 when they cannot be read.
__attribute__((visibility("default"))) long gmt_probe_walk(char* buf, size_t cap, size_t max_frames) {
  PythonStacks* stacks = PythonStacks::find();
  if (!stacks) return -1;
  PythonFrame frames[kMaxFrames];
  bool truncated = false;
  size_t n = stacks->walk(frames, std::min(max_frames, kMaxFrames), &truncated);
  copy_out(format(*stacks, frames, n, truncated), buf, cap);
  return static_cast<long>(n);
}

// Walks from a thread Python never saw (a plain std::thread); returns the number of frames found.
__attribute__((visibility("default"))) long gmt_probe_walk_in_native_thread(void) {
  PythonStacks* stacks = PythonStacks::find();
  if (!stacks) return -1;
  long result = -2;
  std::thread([&] {
    PythonFrame frames[16];
    result = static_cast<long>(stacks->walk(frames, 16));
  }).join();
  return result;
}

// Walks over and over for `seconds` without the GIL, as a daemon thread in native code would while the
// interpreter is finalized under it; returns how many walks found frames.
__attribute__((visibility("default"))) long gmt_probe_walk_loop(double seconds) {
  PythonStacks* stacks = PythonStacks::find();
  if (!stacks) return -1;
  double end = now_ns() + seconds * 1e9;
  long with_frames = 0;
  PythonFrame frames[64];
  while (now_ns() < end) with_frames += stacks->walk(frames, 64) > 0;
  return with_frames;
}

// Python → native → Python: calls `callback` (a ctypes CFUNCTYPE), which takes the GIL to run.
__attribute__((visibility("default"))) void gmt_probe_call_back(void (*callback)(void)) { callback(); }

// same_code: every frame's code matches its own identity and not that of a frame running another code
// object. 0 when so, else the index of the first frame that failed plus one.
__attribute__((visibility("default"))) int gmt_probe_identity_check(void) {
  PythonStacks* stacks = PythonStacks::find();
  if (!stacks) return -1;
  PythonFrame frames[64];
  size_t n = stacks->walk(frames, 64);
  for (size_t i = 0; i < n; ++i) {
    auto id = stacks->identity(frames[i].code);
    if (!stacks->same_code(frames[i].code, id) || stacks->describe(frames[i].code).identity != id)
      return static_cast<int>(i) + 1;
    for (size_t j = 0; j < n; ++j)
      if (frames[j].code != frames[i].code && stacks->same_code(frames[j].code, id)) return static_cast<int>(i) + 1;
  }
  return n > 0 ? 0 : -2;
}

// Cost of walks of the calling thread's stack with warm caches (ns per walk), and of resolving every
// frame's line with PyCode_Addr2Line directly (ns per walk, what the line cache saves).
__attribute__((visibility("default"))) int gmt_probe_bench(size_t iterations, size_t max_frames, double* walk_ns,
                                                           double* resolve_ns, size_t* frame_count) {
  PythonStacks* stacks = PythonStacks::find();
  if (!stacks || iterations == 0) return -1;
  PythonFrame frames[kMaxFrames];
  max_frames = std::min(max_frames, kMaxFrames);
  size_t n = stacks->walk(frames, max_frames);  // warms the line cache
  double start = now_ns();
  size_t total = 0;
  for (size_t i = 0; i < iterations; ++i) {
    total += stacks->walk(frames, max_frames);
    asm volatile("" ::"r"(frames) : "memory");
  }
  *walk_ns = (now_ns() - start) / static_cast<double>(iterations);
  auto addr2line = reinterpret_cast<int (*)(void*, int)>(dlsym(RTLD_DEFAULT, "PyCode_Addr2Line"));
  size_t resolve_iterations = std::max<size_t>(iterations / 10, 1);
  start = now_ns();
  long sink = 0;
  for (size_t i = 0; i < resolve_iterations; ++i)
    for (size_t f = 0; f < n; ++f) sink += addr2line(const_cast<void*>(frames[f].code), frames[f].lasti * 2);
  *resolve_ns = (now_ns() - start) / static_cast<double>(resolve_iterations);
  *frame_count = n;
  return total == n * iterations && sink != 0 ? 0 : -3;
}

}  // extern "C"
