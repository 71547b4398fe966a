// Folded stacks, for flamegraph.pl, inferno and speedscope: one line per stack, "root;caller;callee BYTES",
// the outermost frame first. The root frame is the memory ("device 0", "managed memory", "pinned host
// memory"); then the frames people read (report::user_frames, or all of them with --all-frames), named
// like the text output names them: a native frame by its function (no parameters, no template arguments),
// a Python frame "train_loop.py:57 in train_step", control characters escaped as the text output does
// (common/terminal_text.h). Equal lines are merged; lines are sorted.
#include <map>

#include "analyzer/export/exports.h"
#include "analyzer/render/text_parts.h"
#include "analyzer/export/weighed_export.h"
#include "analyzer/report/stack_text.h"

namespace gpumemtrace::render {

namespace {

std::string frame_name(const symbolize::Frame& frame) {
  std::string name = terminal_text(frame.kind == symbolize::FrameKind::Native && !frame.function.empty()
                                        ? report::short_function_name(frame.function)
                                        : report::frame_text(frame));
  for (char& c : name)
    if (c == ';') c = ',';  // the separator of frames (a newline is escaped)
  return name;
}

void write_folded(std::span<const report::SiteFigures> sites, const report::SymbolizeStack& frames_of,
                  bool all_frames, fmt::memory_buffer& out) {
  std::map<std::string, uint64_t> lines;
  for (const report::SiteFigures& site : sites) {
    if (site.bytes == 0) continue;
    report::Frames frames = frames_of(site.stack);
    report::Frames shown = all_frames ? std::move(frames) : report::user_frames(frames);
    std::string line = account_name(site.memory, site.device);
    if (shown.empty()) line += ";[no stack]";
    for (auto frame = shown.rbegin(); frame != shown.rend(); ++frame) line += ";" + frame_name(*frame);
    lines[line] += site.bytes;
  }
  for (const auto& [line, bytes] : lines) fmt::format_to(std::back_inserter(out), "{} {}\n", line, bytes);
}

}  // namespace

void render_folded(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out) {
  if (const auto* sites = report::report_sites(report.body))
    write_folded(*sites, [&](replay::StackId id) { return report.stacks[id]; }, options.all_frames, out);
}

std::unique_ptr<Exporter> start_folded(const ExportOptions& options, ExportSink& sink) {
  return start_weighed_export(options, sink, [](std::span<const report::SiteFigures> sites,
                                                const report::SymbolizeStack& frames_of, const ExportOptions& options,
                                                const analysis::Analysis&) {
    fmt::memory_buffer out;
    write_folded(sites, frames_of, options.all_frames, out);
    return fmt::to_string(out);
  });
}

}  // namespace gpumemtrace::render
