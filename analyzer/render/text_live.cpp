#include "analyzer/render/live_renderers.h"
#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "analyzer/report/stack_text.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

// "process 42 is running", "process 42 has ended", or of a trace file, whether its process finished it.
std::string attached_line(const report::LiveView& view) {
  if (view.pid) return fmt::format("process {} {}", *view.pid, view.ended ? "has ended" : "is running");
  return view.ended ? "the trace is complete: its process has ended" : "the trace is still open";
}

void append_step(fmt::memory_buffer& out, const report::LiveModel& live) {
  auto o = fmt::appender(out);
  fmt::format_to(o, "phase now: {}\n", live.phase ? terminal_text(*live.phase) : std::string("none open"));
  if (!live.step_phase) {
    fmt::format_to(o, "step: none (no phase repeats 3 times: the forecast's steps are time slices)\n\n");
    return;
  }
  const report::PhaseInstanceFigures& step = *live.step;
  fmt::format_to(o, "step: {} of phase {}, {} {}; peak in it {}\n", step.number, terminal_text(*live.step_phase),
                 step.ended ? "ended at" : "running since", format_time(step.ended ? step.end_ns : step.start_ns),
                 format_size(step.peak_bytes));
  if (!live.last_ended) {
    out.push_back('\n');
    return;
  }
  const report::PhaseInstanceFigures& last = *live.last_ended;
  if (last.left_live.empty()) {
    fmt::format_to(o, "grew in step {}: nothing (all it allocated was freed by its end)\n\n", last.number);
    return;
  }
  fmt::format_to(o, "grew in step {}: {} in {} made in it still live at its end\n", last.number,
                 format_size(last.left_live_bytes), counted(last.left_live_allocations, "allocation"));
}

void append_grown_stacks(fmt::memory_buffer& out, const report::LiveModel& live, const report::Stacks& stacks) {
  if (!live.last_ended || live.last_ended->left_live.empty()) return;
  for (const report::SiteFigures& site : live.last_ended->left_live)
    fmt::format_to(fmt::appender(out), "  {:>10}  {:>5}×  {:<18} {}\n", format_size(site.bytes), site.count,
                   account_name(site.memory, site.device), terminal_text(report::compact_stack(stacks[site.stack])));
  out.push_back('\n');
}

void append_others(fmt::memory_buffer& out, const report::LiveModel& live) {
  auto o = fmt::appender(out);
  if (live.nvml.empty()) {
    fmt::format_to(o, "other processes: not known (NVML did not list the devices)\n\n");
    return;
  }
  for (const replay::NvmlDevice& device : live.nvml) {
    fmt::format_to(o, "NVML device {} ({} {}): ", device.index,
                   format::kDeviceStateMomentNames[static_cast<size_t>(device.moment)], format_time(device.time_ns));
    if (device.total == 0)
      fmt::format_to(o, "free memory not known");
    else
      fmt::format_to(o, "{} free of {}", format_size(device.free), format_size(device.total));
    if (device.processes.empty()) fmt::format_to(o, "; no other process");
    for (const replay::NvmlProcess& process : device.processes)
      fmt::format_to(o, "; pid {} ({}) {}", process.pid, terminal_text(process.command), format_size(process.bytes));
    out.push_back('\n');
  }
  out.push_back('\n');
}

}  // namespace

void render_live_text(const report::LiveView& view, const RenderOptions& options, fmt::memory_buffer& out) {
  report::Stacks shown = options.all_frames ? report::Stacks{} : report::user_stacks(view.summary.stacks);
  const report::Stacks& stacks = options.all_frames ? view.summary.stacks : shown;
  const auto& summary = std::get<report::SummaryReport>(view.summary.body);
  fmt::format_to(fmt::appender(out), "gpumemtrace top: {}, at {} into the trace\n", attached_line(view),
                 format_time(view.live.time_ns));
  append_trace_header(out, view.summary.trace);
  if (view.summary.view) append_view(out, *view.summary.view);
  out.push_back('\n');
  append_step(out, view.live);
  append_grown_stacks(out, view.live, stacks);
  append_accounts(out, summary.accounts);
  append_others(out, view.live);
  append_leaks(out, summary.leaks, stacks, false);
  append_ooms(out, summary.ooms, stacks, false);
  append_forecast(out, summary.forecast, stacks);
}

}  // namespace gpumemtrace::render
