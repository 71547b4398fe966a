#include "analyzer/report/stack_text.h"

#include <fmt/format.h>

namespace gpumemtrace::report {

namespace {

// The CUDA driver and runtime (NVIDIA's or the simulated ones): their frames only say how an API was
// implemented, not where the program asked for memory.
bool is_cuda_library(std::string_view module) {
  std::string_view name = basename_of(module);
  return name.starts_with("libcuda.so") || name.starts_with("libcudart.so");
}

}  // namespace

std::string_view basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
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
  std::string where = !frame.file.empty() ? fmt::format("{}:{}", basename_of(frame.file), frame.line)
                      : !frame.module.empty() ? fmt::format("{}+{:#x}", basename_of(frame.module), frame.offset)
                                              : std::string();
  if (frame.function.empty()) return where.empty() ? fmt::format("{:#x}", frame.offset) : where;
  std::string function = short_function_name(frame.function);
  return where.empty() ? function : fmt::format("{} ({})", function, where);
}

std::string compact_stack(std::span<const symbolize::Frame> frames, size_t max_frames) {
  std::string out;
  size_t shown = 0;
  for (const symbolize::Frame& frame : frames) {
    if (frame.file.empty() || is_cuda_library(frame.module)) continue;
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

}  // namespace gpumemtrace::report
