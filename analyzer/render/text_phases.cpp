#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

std::string size_change(int64_t bytes) {
  return fmt::format("{}{}", bytes < 0 ? "-" : "+", format_size(static_cast<uint64_t>(bytes < 0 ? -bytes : bytes)));
}

void append_instance(fmt::memory_buffer& out, const report::PhaseInstanceFigures& f, const report::Stacks& stacks) {
  auto o = fmt::appender(out);
  fmt::format_to(o, "    #{} thread {}, {} to {}{}: peak {} at {}, allocated {} in {}, left live {} in {}",
                 f.number, f.thread, format_time(f.start_ns), format_time(f.end_ns), f.ended ? "" : " (never ended)",
                 format_size(f.peak_bytes), format_time(f.peak_time_ns), format_size(f.allocated_bytes),
                 f.allocations, format_size(f.left_live_bytes), f.left_live_allocations);
  if (f.growth_bytes) fmt::format_to(o, ", growth {}", size_change(*f.growth_bytes));
  out.push_back('\n');
  for (const report::SiteFigures& site : f.left_live) {
    fmt::format_to(o, "      {} in {} allocations left live{}\n", format_size(site.bytes), site.count,
                   on_device(site.device));
    append_stack_lines(out, stacks[site.stack], "        ");
  }
}

void append_balance(fmt::memory_buffer& out, const report::PhaseBalance& balance) {
  auto o = fmt::appender(out);
  for (const report::UnpoppedPhase& open : balance.unpopped)
    fmt::format_to(o, "  unbalanced: {} pushed {} times on thread {} and never popped (a pop is missing, e.g. skipped "
                      "by `continue` or an exception)\n",
                   open.name, open.open_pushes, open.thread);
  if (balance.unpopped_names > balance.unpopped.size())
    fmt::format_to(o, "  unbalanced: {} more phases pushed again without pops\n",
                   balance.unpopped_names - balance.unpopped.size());
  if (balance.deeper_than_max)
    fmt::format_to(o, "  {} pushes nested deeper than {} levels are counted in the phase at level {}\n",
                   balance.deeper_than_max, replay::kMaxPhaseDepth, replay::kMaxPhaseDepth);
  if (balance.unmatched_ends)
    fmt::format_to(o, "  {} pops or range ends had no phase open to end\n", balance.unmatched_ends);
}

}  // namespace

void append_phases(fmt::memory_buffer& out, const report::PhasesModel& phases, const report::Stacks& stacks) {
  auto o = fmt::appender(out);
  if (phases.phases.empty()) {
    fmt::format_to(o, "phases: none (no NVTX ranges or gpumemtrace annotations in this trace)\n\n");
    return;
  }
  fmt::format_to(o, "phases (device memory of the process; growth: live at the end against the previous instance):\n");
  for (const report::PhaseFigures& phase : phases.phases) {
    fmt::format_to(o, "  {} ({})\n", terminal_text(phase.path), counted(phase.instances.size(), "instance"));
    for (const report::PhaseInstanceFigures& f : phase.instances) append_instance(out, f, stacks);
  }
  append_balance(out, phases.balance);
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
