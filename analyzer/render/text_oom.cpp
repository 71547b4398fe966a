#include <algorithm>

#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "analyzer/report/stack_text.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

std::string where(const report::OomFailure& failure) {
  return failure.device ? fmt::format("device {}", *failure.device) : std::string("host memory");
}

std::string device_memory_text(const report::OomFailure& failure) {
  // A PyTorch snapshot's out-of-memory entry has the device's free memory but not its total.
  if (failure.total_bytes == 0)
    return failure.free_bytes ? fmt::format("{} free (total unknown)", format_size(failure.free_bytes))
                              : std::string("free and total memory unknown");
  return fmt::format("{} free of {}", format_size(failure.free_bytes), format_size(failure.total_bytes));
}

std::string part_size(int64_t bytes) {
  if (bytes >= 0) return format_exact_size(static_cast<uint64_t>(bytes));
  return fmt::format("-{} (the parts were read at different moments)", format_exact_size(static_cast<uint64_t>(-bytes)));
}

// Every byte of the device, one part a line; the parts add up to the total.
void append_breakdown(fmt::memory_buffer& out, const report::DeviceBreakdown& b) {
  auto o = fmt::appender(out);
  auto line = [&](std::string_view part, const std::string& size) { fmt::format_to(o, "    {:<56} {}\n", part, size); };
  fmt::format_to(o, "  the whole device{}, {} in all:\n", b.uuid.empty() ? "" : " (" + b.uuid + ")",
                 format_exact_size(b.total_bytes));
  line("free", format_exact_size(b.free_bytes));
  for (const report::OwnerBytes& owner : b.owners)
    line(fmt::format("this process: {}{}", terminal_text(owner.owner), owner.framework ? " (the framework's segments)" : ""),
         format_exact_size(owner.bytes));
  if (b.unlisted_bytes) line("this process: smaller stacks (no owner found)", format_exact_size(b.unlisted_bytes));
  if (b.pool_unused_bytes) line("this process: unused in its memory pools", format_exact_size(b.pool_unused_bytes));
  if (b.context_source == report::ContextSource::Measured)
    line("CUDA context and runtime (measured as each context was made)", format_exact_size(b.context_bytes));
  else if (b.context_source == report::ContextSource::NvmlProcess)
    line("CUDA context and runtime (NVML's figure for this process less its allocations)",
         format_exact_size(b.context_bytes));
  for (const report::DeviceProcessBytes& process : b.others)
    line(fmt::format("other process: pid {} {}", process.pid,
                     process.command.empty() ? std::string("(name unknown)") : terminal_text(process.command)),
         format_exact_size(process.bytes));
  if (b.unlisted_used_bytes)
    line("used on the device by no process NVML lists", format_exact_size(b.unlisted_used_bytes));
  line("unaccounted", part_size(b.unaccounted_bytes));
  for (const std::string& unseen : b.unseen) fmt::format_to(o, "    not seen: {}\n", unseen);
}

// "expandable_segments=True: this request fits: peak reserved 13.1 GiB instead of 14.9 GiB", a line each.
void append_whatif(fmt::memory_buffer& out, const report::OomFailure& failure) {
  auto o = fmt::appender(out);
  if (!failure.whatif) {
    if (!failure.whatif_missing.empty())
      fmt::format_to(o, "  what-if: none: {}\n", terminal_text(failure.whatif_missing));
    return;
  }
  const report::OomWhatif& w = *failure.whatif;
  const report::OomRemedyOutcome& recorded = w.outcomes.at(0);
  uint64_t room = w.device_memory - std::min(w.device_memory, w.other_memory);
  fmt::format_to(o, "  what-if (PyTorch's history replayed by the allocator model up to this request, #{} of {}, on {} "
                 "with {} held by others; docs/whatif.md):\n",
                 w.request, format_exact_size(w.size), format_size(w.device_memory), format_size(w.other_memory));
  for (const report::OomRemedyOutcome& r : w.outcomes) {
    fmt::format_to(o, "    {}: ", r.setting);
    if (!r.fails_at)
      fmt::format_to(o, "this request fits: peak reserved {}{}\n", format_size(r.peak_reserved),
                     &r == &recorded ? " (the model does not reproduce the failure)"
                                     : " instead of " + format_size(recorded.peak_reserved));
    else if (*r.fails_at == w.request)
      fmt::format_to(o, "{}: live tensors and the request need {} of the {} the device had for the allocator\n",
                     &r == &recorded ? "fails at this request, as recorded" : "would still fail",
                     format_size(r.live_bytes), format_size(room));
    else
      fmt::format_to(o, "fails earlier, at request #{}\n", *r.fails_at);
  }
}

void append_detail(fmt::memory_buffer& out, const report::OomFailure& failure, const report::Stacks& stacks,
                   size_t top) {
  auto o = fmt::appender(out);
  fmt::format_to(o, "  failed call, innermost first:\n");
  append_stack_lines(out, stacks[failure.stack], "      ");
  fmt::format_to(o, "  {}: {}\n", where(failure), device_memory_text(failure));
  fmt::format_to(o, "  this process held {} ({} live in {} allocations, {} unused in its pools)",
                 format_size(failure.held_bytes), format_size(failure.live_bytes), failure.live_count,
                 format_size(failure.pool_unused_bytes));
  if (failure.others_bytes) fmt::format_to(o, "; other processes {}", format_size(*failure.others_bytes));
  out.push_back('\n');
  if (failure.breakdown) append_breakdown(out, *failure.breakdown);
  for (const report::PoolFigures& pool : failure.pools)
    fmt::format_to(o, "  pool {:#x}: {} reserved, {} used\n", pool.pool, format_size(pool.reserved_bytes),
                   format_size(pool.used_bytes));
  fmt::format_to(o, "  verdict: {}: {}\n  remedy: {}\n", report::verdict_name(failure.verdict),
                 terminal_text(failure.finding), terminal_text(failure.remedy));
  append_whatif(out, failure);
  if (!failure.has_detail) {
    fmt::format_to(o, "  (the live set is kept for the first failures only)\n");
    return;
  }
  fmt::format_to(o, "  live then, by stack:\n");
  for (size_t i = 0; i < failure.live_set.size() && i < top; ++i) {
    const report::LiveSite& site = failure.live_set[i];
    fmt::format_to(o, "    {:>10}  {:>5}×  {}\n", format_size(site.bytes), site.count,
                   terminal_text(report::compact_stack(stacks[site.stack])));
  }
}

}  // namespace

void append_placement(fmt::memory_buffer& out, const report::DevicePlacement& placement) {
  if (placement.findings.empty()) return;
  auto o = fmt::appender(out);
  for (const std::string& finding : placement.findings)
    fmt::format_to(o, "verdict: {}: {}\n", report::kWrongGpuVerdict, terminal_text(finding));
  fmt::format_to(o, "  remedy: {}\n\n", placement.remedy);
}

void append_ooms(fmt::memory_buffer& out, const report::OomModel& ooms, const report::Stacks& stacks, bool detailed) {
  auto o = fmt::appender(out);
  append_placement(out, ooms.placement);
  if (ooms.failures.empty()) fmt::format_to(o, "out of memory: never\n");
  size_t number = 0;
  for (const report::OomFailure& failure : ooms.failures) {
    ++number;
    if (!detailed) {
      fmt::format_to(o, "out of memory at {} on {}: {} of {} with {}\n  verdict: {}: {}\n", format_time(failure.time_ns),
                     where(failure), failure.api, format_size(failure.requested_bytes), device_memory_text(failure),
                     report::verdict_name(failure.verdict), terminal_text(failure.finding));
      if (number == ooms.top) break;
      continue;
    }
    fmt::format_to(o, "out of memory #{} at {} on {}: {} of {} failed ({})\n", number, format_time(failure.time_ns),
                   where(failure), failure.api, format_size(failure.requested_bytes), failure.error);
    append_detail(out, failure, stacks, ooms.top);
    out.push_back('\n');
  }
  if (!detailed && ooms.failures.size() > number)
    fmt::format_to(o, "  ... and {} more\n", ooms.failures.size() - number);
  if (!detailed && !ooms.failures.empty()) fmt::format_to(o, "  (`gpumemtrace oom` shows the evidence and what to do)\n");
  if (ooms.other_failures) fmt::format_to(o, "{} allocations failed for other reasons than memory\n", ooms.other_failures);
  if (ooms.failures_without_detail)
    fmt::format_to(o, "{} more failures are counted without their details\n", ooms.failures_without_detail);
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
