// gpumemtrace peak TRACE: per device, the most device memory the process held and what held it then.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/cli/report_sections.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace peak [options] TRACE\n"
    "\n"
    "For each device: the peak of its device memory (cuMemAlloc/cudaMalloc, async pools, VMM physical\n"
    "memory and arrays, in requested bytes), the first time it was reached, and the allocations live then,\n"
    "grouped by call stack, largest first.\n";

constexpr size_t kind_index(trace::MemoryKind kind) { return static_cast<size_t>(kind); }

std::string kinds_text(const std::array<uint64_t, replay::kMemoryKinds>& bytes) {
  std::string out;
  for (auto kind : {trace::MemoryKind::Device, trace::MemoryKind::AsyncPool, trace::MemoryKind::VmmPhysical,
                    trace::MemoryKind::Array}) {
    if (bytes[kind_index(kind)] == 0) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", format::memory_kind_name(kind),
                       format_size(bytes[kind_index(kind)]));
  }
  return out;
}

int peak_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{"peak", kHelp, 10, false,
                                        [](ReportContext& c, fmt::memory_buffer& out) { append_peak_text(c, out, true); },
                                        [](ReportContext& c, JsonTree& json) {
                                          write_accounts_json(c, json);
                                          write_peak_json(c, json);
                                        }});
}

}  // namespace

void append_peak_text(ReportContext& context, fmt::memory_buffer& out, bool detailed) {
  const replay::Replay& replay = context.replay();
  auto o = fmt::appender(out);
  report::SiteFilter filter = context.filter();
  std::vector<replay::SiteShare> shares =
      report::rank_sites(replay, filter, [&](replay::SiteId id) { return replay.at_peak(id); });
  bool any = false;
  for (replay::AccountId id : replay.accounts().devices()) {
    const replay::Account& account = replay.accounts()[id];
    if (!report::wanted_account(account, filter) || account.peak_bytes == 0) continue;
    any = true;
    fmt::format_to(o, "peak of {}: {} at {} ({} allocations live", account_name(account),
                   format_size(account.peak_bytes), format_time(account.peak_time_ns), account.peak_count);
    if (detailed) fmt::format_to(o, ": {}", kinds_text(account.kind_bytes_at_peak));
    fmt::format_to(o, "), the largest stacks then:\n");
    size_t rank = 0;
    for (const replay::SiteShare& share : shares) {
      if (replay.sites()[share.site].account != id) continue;
      const auto& frames = context.stack(replay.sites()[share.site].stack);
      double percent = 100.0 * static_cast<double>(share.bytes) / static_cast<double>(account.peak_bytes);
      if (!detailed) {
        fmt::format_to(o, "  {:>10} {:>5.1f}%  {:>5}×  {}\n", format_size(share.bytes), percent, share.count,
                       compact_stack(frames));
        continue;
      }
      fmt::format_to(o, "  #{} {} ({:.1f}%) in {} allocations\n", ++rank, format_size(share.bytes), percent,
                     share.count);
      append_stack_lines(out, frames, "      ");
    }
    out.push_back('\n');
  }
  if (!any) fmt::format_to(o, "no device memory was allocated{}\n\n",
                           filter.device ? fmt::format(" on device {}", *filter.device) : "");
}

void write_peak_json(ReportContext& context, JsonTree& json) {
  const replay::Replay& replay = context.replay();
  json.begin_array("peak");
  for (const replay::SiteShare& share :
       report::rank_sites(replay, context.filter(), [&](replay::SiteId id) { return replay.at_peak(id); })) {
    const replay::Site& site = replay.sites()[share.site];
    json.begin_object();
    write_device(json, "device", site.device);
    json.number("bytes", share.bytes);
    json.number("allocations", share.count);
    write_stack(json, "stack", context.stack(site.stack));
    json.end_object();
  }
  json.end_array();
}

extern const Command peak_command;
const Command peak_command{"peak", "the peak of device memory and the stacks that held it", kHelp, peak_main};

}  // namespace gpumemtrace::cli
