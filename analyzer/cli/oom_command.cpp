// gpumemtrace oom TRACE: each out-of-memory failure, what held the memory then, and why it failed.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/cli/report_sections.h"
#include "analyzer/report/oom_diagnosis.h"
#include "trace/reader/cuda_error_name.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace oom [options] TRACE\n"
    "\n"
    "For each allocation that failed with out of memory: the request, the device's free and total memory\n"
    "at that moment, what this process held (live allocations, and memory its pools held unused), what\n"
    "other processes held, the live set grouped by call stack, and a verdict from that evidence with its\n"
    "remedy: the request alone is too large for the device; memory pools held it unused; other processes\n"
    "held it; a stack kept growing; or else the live set is simply too big (see docs/reports.md).\n";

struct Explanation {
  std::string finding;
  std::string remedy;
};

Explanation explain(ReportContext& context, const replay::Failure& failure, const report::OomDiagnosis& d) {
  const uint64_t total = failure.device_total;
  switch (d.verdict) {
    case report::Verdict::TooLarge:
      return {fmt::format("the request alone ({}) is more than the device's whole memory ({})",
                          format_size(failure.requested_bytes), format_size(total)),
              "split the work: a smaller batch or chunk, tensor or pipeline parallelism across devices, or "
              "offloading to host memory"};
    case report::Verdict::PoolCache:
      return {fmt::format("memory pools held {} reserved but unused; with it the request would have fit "
                          "({} free + {} unused >= {})",
                          format_size(d.pool_unused_bytes), format_size(failure.device_free),
                          format_size(d.pool_unused_bytes), format_size(failure.requested_bytes)),
              "give the pools' unused memory back before large allocations: cudaMemPoolTrimTo(pool, 0), or a lower "
              "release threshold (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, ...)); under "
              "PyTorch set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or call torch.cuda.empty_cache())"};
    case report::Verdict::OtherProcesses:
      return {fmt::format("other processes held {} of the device's {} ({:.0f}%), more than this process's {}; "
                          "without them the request would have fit",
                          format_size(d.others_bytes), format_size(total),
                          100.0 * static_cast<double>(d.others_bytes) / static_cast<double>(total),
                          format_size(d.held_bytes)),
              "find the other processes on the device (nvidia-smi) and end a stale one, or run on another device "
              "(CUDA_VISIBLE_DEVICES)"};
    case report::Verdict::Growth: {
      const replay::Site& site = context.replay().sites()[d.growth->site];
      return {fmt::format("a stack kept growing (rose in {} of {} time slices) and held {} at the failure, more "
                          "than the {} missing: {}",
                          d.growth->rises, d.growth->floors.size() - 1, format_size(d.growth_live_bytes),
                          format_size(d.shortfall_bytes), compact_stack(context.stack(site.stack))),
              "memory accumulates across iterations there (the `total_loss += loss` pattern): keep a number, not "
              "the tensor (loss.item(), .detach()), or free what each iteration no longer needs"};
    }
    default:
      return {fmt::format("the process's own live memory ({}) plus the request is more than the device could give",
                          format_size(failure.live_bytes)),
              "shrink the largest live stacks below: a smaller batch, activation checkpointing, lower precision "
              "(fp16/bf16), or freeing what is no longer needed sooner"};
  }
}

std::vector<const replay::Failure*> wanted_ooms(ReportContext& context) {
  std::vector<const replay::Failure*> out;
  report::SiteFilter filter = context.filter(false);
  for (const replay::Failure& failure : context.replay().failures()) {
    if (failure.out_of_memory() && report::wanted_account(context.replay().accounts()[failure.account], filter))
      out.push_back(&failure);
  }
  return out;
}

std::string where(const replay::Failure& failure) {
  return failure.device == trace::kNoDevice ? std::string("host memory") : fmt::format("device {}", failure.device);
}

std::string device_memory_text(const replay::Failure& failure) {
  if (failure.device_total == 0) return "free and total memory unknown";
  return fmt::format("{} free of {}", format_size(failure.device_free), format_size(failure.device_total));
}

void append_detail(ReportContext& context, fmt::memory_buffer& out, const replay::Failure& failure,
                   const report::OomDiagnosis& d, const Explanation& why) {
  auto o = fmt::appender(out);
  fmt::format_to(o, "  failed call, innermost first:\n");
  append_stack_lines(out, context.stack(failure.stack), "      ");
  fmt::format_to(o, "  {}: {}\n", where(failure), device_memory_text(failure));
  fmt::format_to(o, "  this process held {} ({} live in {} allocations, {} unused in its pools)", format_size(d.held_bytes),
                 format_size(failure.live_bytes), failure.live_count, format_size(d.pool_unused_bytes));
  if (d.device_known) fmt::format_to(o, "; other processes {}", format_size(d.others_bytes));
  out.push_back('\n');
  for (const replay::PoolState& pool : failure.pools)
    fmt::format_to(o, "  pool {:#x}: {} reserved, {} used\n", pool.pool, format_size(pool.reserved_bytes),
                   format_size(pool.used_bytes));
  fmt::format_to(o, "  verdict: {}: {}\n  remedy: {}\n", report::verdict_name(d.verdict), why.finding, why.remedy);
  if (!failure.has_detail) {
    fmt::format_to(o, "  (the live set is kept for the first failures only)\n");
    return;
  }
  fmt::format_to(o, "  live then, by stack:\n");
  size_t shown = 0;
  for (const replay::SiteShare& share : failure.live_set) {
    if (shown == context.options().top || share.bytes < context.options().min_size) break;
    ++shown;
    fmt::format_to(o, "    {:>10}  {:>5}×  {}\n", format_size(share.bytes), share.count,
                   compact_stack(context.stack(context.replay().sites()[share.site].stack)));
  }
}

int oom_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{"oom", kHelp, 10, false,
                                        [](ReportContext& c, fmt::memory_buffer& out) { append_oom_text(c, out, true); },
                                        [](ReportContext& c, JsonTree& json) { write_ooms_json(c, json, true); }});
}

}  // namespace

void append_oom_text(ReportContext& context, fmt::memory_buffer& out, bool detailed) {
  auto o = fmt::appender(out);
  const replay::Replay& replay = context.replay();
  std::vector<const replay::Failure*> ooms = wanted_ooms(context);
  std::vector<report::Growth> growth = report::find_growth(replay);
  uint64_t other_failures = 0;
  for (const replay::Failure& failure : replay.failures()) other_failures += !failure.out_of_memory();
  if (ooms.empty()) fmt::format_to(o, "out of memory: never\n");
  size_t number = 0;
  for (const replay::Failure* failure : ooms) {
    report::OomDiagnosis d = report::diagnose(replay, *failure, growth);
    Explanation why = explain(context, *failure, d);
    ++number;
    if (!detailed) {
      fmt::format_to(o, "out of memory at {} on {}: {} of {} with {}\n  verdict: {}: {}\n", format_time(failure->time_ns),
                     where(*failure), format::api_info(failure->api).name, format_size(failure->requested_bytes),
                     device_memory_text(*failure), report::verdict_name(d.verdict), why.finding);
      if (number == context.options().top) break;
      continue;
    }
    fmt::format_to(o, "out of memory #{} at {} on {}: {} of {} failed ({})\n", number, format_time(failure->time_ns),
                   where(*failure), format::api_info(failure->api).name, format_size(failure->requested_bytes),
                   trace::cuda_error_name(failure->error));
    append_detail(context, out, *failure, d, why);
    out.push_back('\n');
  }
  if (!detailed && ooms.size() > number) fmt::format_to(o, "  ... and {} more\n", ooms.size() - number);
  if (!detailed && !ooms.empty()) fmt::format_to(o, "  (`gpumemtrace oom` shows the evidence and what to do)\n");
  if (other_failures) fmt::format_to(o, "{} allocations failed for other reasons than memory\n", other_failures);
  if (replay.failures_without_detail())
    fmt::format_to(o, "{} more failures are counted without their details\n", replay.failures_without_detail());
  out.push_back('\n');
}

void write_ooms_json(ReportContext& context, JsonTree& json, bool detailed) {
  const replay::Replay& replay = context.replay();
  std::vector<report::Growth> growth = detailed ? report::find_growth(replay) : std::vector<report::Growth>{};
  json.begin_array("ooms");
  for (const replay::Failure* failure : wanted_ooms(context)) {
    json.begin_object();
    write_device(json, "device", failure->device);
    json.number("time_ns", failure->time_ns);
    json.number("requested_bytes", failure->requested_bytes);
    json.number("free_bytes", failure->device_free);
    json.number("total_bytes", failure->device_total);
    json.number("live_bytes", failure->live_bytes);
    json.string("api", format::api_info(failure->api).name);
    write_stack(json, "stack", context.stack(failure->stack));
    if (detailed) {
      report::OomDiagnosis d = report::diagnose(replay, *failure, growth);
      Explanation why = explain(context, *failure, d);
      json.string("verdict", report::verdict_name(d.verdict));
      json.string("finding", why.finding);
      json.string("remedy", why.remedy);
      json.number("held_bytes", d.held_bytes);
      json.optional_number("others_bytes", d.device_known ? std::optional<uint64_t>(d.others_bytes) : std::nullopt);
      json.number("pool_reserved_bytes", d.pool_reserved_bytes);
      json.number("pool_used_bytes", d.pool_used_bytes);
      json.begin_array("live_set");
      for (const replay::SiteShare& share : failure->live_set) {
        if (share.bytes < context.options().min_size) break;
        json.begin_object();
        json.number("bytes", share.bytes);
        json.number("allocations", share.count);
        write_stack(json, "stack", context.stack(replay.sites()[share.site].stack));
        json.end_object();
      }
      json.end_array();
    }
    json.end_object();
  }
  json.end_array();
}

extern const Command oom_command;
const Command oom_command{"oom", "why allocations ran out of memory, and what to do", kHelp, oom_main};

}  // namespace gpumemtrace::cli
