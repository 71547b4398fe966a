#include "analyzer/cli/report_output.h"

#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

std::string_view basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The CUDA driver and runtime (NVIDIA's or the simulated ones): their frames only say how an API was
// implemented, not where the program asked for memory.
bool is_cuda_library(std::string_view module) {
  std::string_view name = basename_of(module);
  return name.starts_with("libcuda.so") || name.starts_with("libcudart.so");
}

void append_inconsistencies(fmt::memory_buffer& out, const replay::Inconsistencies& bad) {
  auto o = fmt::appender(out);
  std::pair<uint64_t, std::string_view> counts[] = {
      {bad.unknown_frees, "frees of addresses never allocated"},
      {bad.double_frees, "double frees"},
      {bad.reallocated_live, "allocations at an address still live (a free missing)"},
      {bad.unknown_unmaps, "unmaps of ranges never mapped"},
      {bad.unmatched_failed_frees, "refused frees that match no free"},
  };
  if (bad.total() > 0) {
    fmt::format_to(o, "warning: the trace does not add up in {} places, counted and skipped:", bad.total());
    for (auto [count, what] : counts)
      if (count) fmt::format_to(o, " {} {};", count, what);
    out.resize(out.size() - 1);
    out.push_back('\n');
  }
  if (bad.refused_invalid_frees)
    fmt::format_to(o, "note: the program freed {} addresses that were not live; the driver refused them\n",
                   bad.refused_invalid_frees);
  if (bad.restored_allocations)
    fmt::format_to(o, "note: the driver refused {} frees; those allocations stayed live\n", bad.restored_allocations);
}

}  // namespace

std::string format_time(uint64_t ns) {
  if (ns < 1'000'000) return fmt::format("{} µs", ns / 1000);
  if (ns < 1'000'000'000) return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
}

std::string account_name(const replay::Account& account) {
  switch (account.category) {
    case replay::Category::Managed:
      return "managed memory";
    case replay::Category::HostPinned:
      return "pinned host memory";
    default:
      return account.device == trace::kNoDevice ? std::string("device unknown") : fmt::format("device {}", account.device);
  }
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

void append_stack_lines(fmt::memory_buffer& out, std::span<const symbolize::Frame> frames, std::string_view indent) {
  if (frames.empty()) fmt::format_to(fmt::appender(out), "{}(no stack recorded)\n", indent);
  for (const symbolize::Frame& frame : frames)
    fmt::format_to(fmt::appender(out), "{}{}{}\n", indent, frame_text(frame), frame.inlined ? " [inlined]" : "");
}

void append_trace_header(fmt::memory_buffer& out, const ReportContext& context) {
  const report::TraceInfo& trace = context.trace();
  auto o = fmt::appender(out);
  fmt::format_to(o, "trace: {}", trace.path);
  if (trace.pid) fmt::format_to(o, " (pid {}: {})", trace.pid, trace.command);
  out.push_back('\n');
  const replay::Replay& replay = context.replay();
  uint64_t span = replay.end_time_ns() - std::min(replay.end_time_ns(), replay.first_event_ns());
  if (trace.complete)
    fmt::format_to(o, "complete: {} events over {}\n", trace.events, format_time(span));
  else
    fmt::format_to(o,
                   "INCOMPLETE: the trace stops at {} without the process's normal exit (killed, crashed or still "
                   "running); analyzed up to its last event: {} events over {}\n",
                   format_time(replay.end_time_ns()), trace.events, format_time(span));
  append_inconsistencies(out, replay.inconsistencies());
}

void write_frame(JsonTree& json, const symbolize::Frame& frame) {
  json.begin_object();
  if (!frame.function.empty())
    json.string("function", frame.function);
  else if (!frame.module.empty())
    json.string("function", fmt::format("{}+{:#x}", basename_of(frame.module), frame.offset));
  else
    json.string("function", fmt::format("{:#x}", frame.offset));
  json.optional_string("file", frame.file);
  json.optional_number("line", frame.file.empty() ? std::nullopt : std::optional<uint64_t>(frame.line));
  json.optional_string("module", frame.module);
  json.string("kind", "native");
  json.end_object();
}

void write_stack(JsonTree& json, std::string_view key, std::span<const symbolize::Frame> frames) {
  json.begin_array(key);
  for (const symbolize::Frame& frame : frames) write_frame(json, frame);
  json.end_array();
}

void write_device(JsonTree& json, std::string_view key, int32_t device) {
  if (device == trace::kNoDevice)
    json.null(key);
  else
    json.number(key, int64_t{device});
}

void write_trace(JsonTree& json, const report::TraceInfo& trace) {
  json.begin_object("trace");
  json.string("path", trace.path);
  json.number("pid", trace.pid);
  json.string("command", trace.command);
  json.boolean("complete", trace.complete);
  json.number("events", trace.events);
  json.end_object();
}

}  // namespace gpumemtrace::cli
