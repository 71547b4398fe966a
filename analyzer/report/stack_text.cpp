#include "analyzer/report/stack_text.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpumemtrace::report {

namespace {

// Whose code a frame is: the program's, or machinery that only says how a call was carried out (by a native
// frame's module), or how the program told the tracer (by the source file).
enum class Owner {
  Program,
  Allocation,   // the CUDA driver and runtime, a caching allocator's internals: how the memory was got
  Interpreter,  // CPython
  CallGlue,     // between Python and native code (ctypes, libffi), or between PyTorch's operators
  Framework,    // PyTorch's own code, its Python package and its libraries: machinery at the innermost end of a
                // stack with the program's Python frames; the program's code in a C++ program built on libtorch
  NoSource,     // a frame known by name only, without a source file: noise in a PyTorch snapshot's stacks
  Reporting,    // the calls a program reports its phases, heaps and blocks with
};

// NVTX's header-only implementation (nvtx3/...), annotate.h and the Python module gpumemtrace: the calls a
// program reports its phases, heaps and blocks with; the stack of a block starts there.
bool is_reporting_code(std::string_view file) {
  return file.find("/nvtx3/") != std::string_view::npos || file.ends_with("gpumemtrace/annotate.h") ||
         file.ends_with("gpumemtrace/__init__.py");
}
// PyTorch's caching allocator and the capture of a snapshot's stack (PyTorch's own viewers leave these out too).
bool is_pytorch_allocator(std::string_view function) {
  for (std::string_view internal : {"CachingAllocator", "CapturedTraceback", "unwind::unwind", "gather_with_cpp"})
    if (function.find(internal) != std::string_view::npos) return true;
  return false;
}

// A frame of a PyTorch snapshot's C++ stack: a name and a file ("??" or empty when unknown), no module.
Owner owner_of_named(const symbolize::Frame& frame) {
  if (frame.file.empty() || frame.file == "??") return Owner::NoSource;
  std::string_view name = frame.function;
  if (is_pytorch_allocator(name)) return Owner::Allocation;
  std::string_view file = frame.file;
  bool c_source = file.ends_with(".c") || file.ends_with(".h");
  for (std::string_view folder : {"Python/", "Objects/", "Modules/", "Include/"})
    if (c_source && file.find(folder) != std::string_view::npos) return Owner::Interpreter;
  std::string_view base = basename_of(file);
  if (base.starts_with("Register") || base.starts_with("Redispatch") || file.find("core/boxing") != std::string_view::npos)
    return Owner::CallGlue;  // the operator dispatcher's generated code
  return Owner::Program;
}

Owner owner_of(const symbolize::Frame& frame) {
  if (is_reporting_code(frame.file)) return Owner::Reporting;
  if (frame.kind == symbolize::FrameKind::Python) {
    bool installed_torch = frame.file.find("-packages/torch/") != std::string::npos;  // site- or dist-packages
    return installed_torch ? Owner::Framework : Owner::Program;
  }
  if (frame.kind != symbolize::FrameKind::Native) return Owner::Program;
  if (frame.module.empty() && !frame.function.empty()) return owner_of_named(frame);
  std::string_view name = basename_of(frame.module);
  // The CUDA driver and runtime, NVIDIA's or the simulated ones.
  if (name.starts_with("libcuda.so") || name.starts_with("libcudart.so")) return Owner::Allocation;
  // CPython: libpython, or an interpreter executable with libpython linked in (python3, python3.12).
  if (name.starts_with("libpython") || name == "python" || name.starts_with("python3")) return Owner::Interpreter;
  // ctypes and libffi: the glue between Python and a native call or callback.
  if (name.starts_with("_ctypes") || name.starts_with("libffi")) return Owner::CallGlue;
  if (name.starts_with("libtorch") || name.starts_with("libc10"))
    return is_pytorch_allocator(frame.function) ? Owner::Allocation : Owner::Framework;
  return Owner::Program;
}

// What runs a thread's function: glibc's start_thread and clone, and std::thread's trampoline in libstdc++.
bool is_thread_start_up(const symbolize::Frame& frame) {
  if (frame.kind != symbolize::FrameKind::Native) return false;
  std::string function = short_function_name(frame.function);
  return function == "start_thread" || function == "clone" || function == "__clone" || function == "clone3" ||
         function == "__clone3" || basename_of(frame.module).starts_with("libstdc++");
}

bool is_python(const symbolize::Frame& frame) { return frame.kind == symbolize::FrameKind::Python; }

}  // namespace

std::string_view basename_of(std::string_view path) {
  size_t slash = path.find_last_of("/\\");  // Windows paths come in PyTorch snapshots
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string short_function_name(std::string_view name) {
  auto cut_balanced_suffix = [&](char open, char close) {
    if (name.empty() || name.back() != close) return;
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      depth += name[i] == close ? 1 : name[i] == open ? -1 : 0;
      if (depth == 0) {
        name = name.substr(0, i);
        return;
      }
    }
  };
  // A compiler's copy of a function ("f(int) [clone .constprop.0]") is the function.
  if (size_t clone = name.rfind(" [clone "); clone != std::string_view::npos && name.ends_with(']'))
    name = name.substr(0, clone);
  for (std::string_view qualifier : {" const", " volatile", " &&", " &"})
    if (name.ends_with(qualifier)) name.remove_suffix(qualifier.size());
  cut_balanced_suffix('(', ')');  // the parameters
  // The return type of a template function: up to the last space outside <> and ().
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    depth += name[i] == '<' || name[i] == '(' ? 1 : name[i] == '>' || name[i] == ')' ? -1 : 0;
    if (depth == 0 && name[i] == ' ' && !name.substr(0, i).ends_with("operator")) name = name.substr(i + 1), i = 0;
  }
  std::string out;
  depth = 0;
  for (char c : name) {  // template arguments become <…>
    if (c == '<' && depth++ == 0) out += "<…>";
    if (c == '>') --depth;
    else if (depth == 0 && c != '<') out += c;
  }
  constexpr std::string_view kAnonymous = "(anonymous namespace)::";
  for (size_t at; (at = out.find(kAnonymous)) != std::string::npos;) out.erase(at, kAnonymous.size());
  return out;
}

std::string frame_text(const symbolize::Frame& frame) {
  if (frame.kind == symbolize::FrameKind::Truncated) return "… (truncated)";
  if (frame.kind == symbolize::FrameKind::Python)
    return fmt::format("{}:{} in {}", basename_of(frame.file), frame.line, frame.function);
  std::string where = !frame.file.empty() && frame.line ? fmt::format("{}:{}", basename_of(frame.file), frame.line)
                      : !frame.file.empty()               ? std::string(basename_of(frame.file))
                      : !frame.module.empty() ? fmt::format("{}+{:#x}", basename_of(frame.module), frame.offset)
                                              : std::string();
  if (frame.function.empty()) return where.empty() ? fmt::format("{:#x}", frame.offset) : where;
  std::string function = short_function_name(frame.function);
  return where.empty() ? function : fmt::format("{} ({})", function, where);
}

Frames user_frames(std::span<const symbolize::Frame> frames) {
  // With the program's own Python frames in it, the framework's frames only say how its calls were carried out.
  bool framework_is_machinery = std::any_of(frames.begin(), frames.end(), [](const symbolize::Frame& frame) {
    return is_python(frame) && owner_of(frame) == Owner::Program;
  });
  auto leading_machinery = [&](const symbolize::Frame& frame) {
    Owner owner = owner_of(frame);
    return owner != Owner::Program && (owner != Owner::Framework || framework_is_machinery);
  };
  size_t first = 0;
  while (first < frames.size() && leading_machinery(frames[first])) ++first;
  if (first == frames.size()) return Frames(frames.begin(), frames.end());
  size_t outermost_python = frames.size();
  for (size_t i = frames.size(); i-- > first;) {
    if (is_python(frames[i])) {
      outermost_python = i;
      break;
    }
  }
  Frames out;
  for (size_t i = first; i < frames.size(); ++i) {
    const symbolize::Frame& frame = frames[i];
    Owner owner = owner_of(frame);
    bool machinery = owner == Owner::Interpreter || owner == Owner::CallGlue;
    bool start_up = outermost_python < frames.size() && i > outermost_python &&
                    frame.kind == symbolize::FrameKind::Native;
    if (owner == Owner::NoSource || (outermost_python < frames.size() && (machinery || start_up))) continue;
    // What calls main is the C library's start-up (_start, __libc_start_main), and what calls a thread's function
    // its thread start-up: nobody's code to read.
    if (!out.empty() && is_thread_start_up(frame) &&
        std::all_of(frames.begin() + i, frames.end(), [](const auto& f) { return is_thread_start_up(f); }))
      break;
    out.push_back(frame);
    if (frame.kind == symbolize::FrameKind::Native && short_function_name(frame.function) == "main") break;
  }
  return out;
}

std::string compact_stack(std::span<const symbolize::Frame> all_frames, size_t max_frames) {
  Frames frames = user_frames(all_frames);
  std::string out;
  size_t shown = 0;
  for (const symbolize::Frame& frame : frames) {
    if (frame.file.empty() || owner_of(frame) == Owner::Allocation || owner_of(frame) == Owner::Reporting) continue;
    if (shown == max_frames) {
      out += " ← …";
      break;
    }
    if (shown++) out += " ← ";
    out += frame_text(frame);
    if (short_function_name(frame.function) == "main") break;
  }
  if (shown > 0) return out;
  for (size_t i = 0; i < frames.size() && i < 2; ++i) out += (i ? " ← " : "") + frame_text(frames[i]);
  return out.empty() ? std::string("(no stack recorded)") : out;
}

Stacks user_stacks(const Stacks& stacks) {
  Stacks out;
  for (const auto& [id, frames] : stacks.frames) out.frames.emplace(id, user_frames(frames));
  return out;
}

}  // namespace gpumemtrace::report
