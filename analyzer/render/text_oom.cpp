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
  for (const report::PoolFigures& pool : failure.pools)
    fmt::format_to(o, "  pool {:#x}: {} reserved, {} used\n", pool.pool, format_size(pool.reserved_bytes),
                   format_size(pool.used_bytes));
  fmt::format_to(o, "  verdict: {}: {}\n  remedy: {}\n", report::verdict_name(failure.verdict),
                 terminal_text(failure.finding), terminal_text(failure.remedy));
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

void append_ooms(fmt::memory_buffer& out, const report::OomModel& ooms, const report::Stacks& stacks, bool detailed) {
  auto o = fmt::appender(out);
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
