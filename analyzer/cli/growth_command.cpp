// gpumemtrace growth TRACE: stacks whose live memory keeps rising across the run.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/cli/report_sections.h"
#include "analyzer/report/growth.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace growth [options] TRACE\n"
    "\n"
    "The call stacks whose live memory keeps rising across the run: the trace from its first allocation\n"
    "to its end is cut into 10 equal time slices, and a stack grows when the least it held in each slice\n"
    "never goes down, rises in at least half of the slices and ends higher than it started (memory\n"
    "accumulated across iterations, like `total_loss += loss`). Memory freed every iteration never counts.\n";

std::vector<report::Growth> wanted_growth(ReportContext& context, bool device_memory_only) {
  const replay::Replay& replay = context.replay();
  report::SiteFilter filter = context.filter(device_memory_only);
  std::vector<report::Growth> out;
  std::map<replay::AccountId, size_t> per_account;
  for (report::Growth& growth : report::find_growth(replay)) {
    const replay::Site& site = replay.sites()[growth.site];
    if (!report::wanted_account(replay.accounts()[site.account], filter) || growth.bytes < filter.min_size) continue;
    if (per_account[site.account]++ < filter.top) out.push_back(std::move(growth));
  }
  return out;
}

// "▁▂▄█": each window's floor against the largest.
std::string sparkline(const std::vector<uint64_t>& values) {
  static constexpr std::string_view kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  uint64_t top = std::max<uint64_t>(1, *std::max_element(values.begin(), values.end()));
  std::string out;
  for (uint64_t value : values) out += kBlocks[static_cast<size_t>((value * 7 + top / 2) / top)];
  return out;
}

int growth_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{"growth", kHelp, 10, false,
                                        [](ReportContext& c, fmt::memory_buffer& out) { append_growth_text(c, out, true); },
                                        [](ReportContext& c, JsonTree& json) { write_growth_json(c, json, true); }});
}

}  // namespace

void append_growth_text(ReportContext& context, fmt::memory_buffer& out, bool detailed) {
  auto o = fmt::appender(out);
  std::vector<report::Growth> growth = wanted_growth(context, false);
  if (growth.empty()) {
    fmt::format_to(o, "growth: no stack's live memory kept rising\n\n");
    return;
  }
  fmt::format_to(o, "growth: stacks whose live memory kept rising ({} equal time slices from the first allocation):\n",
                 growth.front().floors.size());
  for (const report::Growth& g : growth) {
    const replay::Site& site = context.replay().sites()[g.site];
    std::string where = account_name(context.replay().accounts()[site.account]);
    const auto& frames = context.stack(site.stack);
    size_t steps = g.floors.size() - 1;
    if (!detailed) {
      fmt::format_to(o, "  +{:<10} rose in {} of {} slices, {}: {}\n", format_size(g.bytes), g.rises, steps, where,
                     compact_stack(frames));
      continue;
    }
    fmt::format_to(o, "  +{} on {}, rose in {} of {} slices: {} (from {} to {})\n", format_size(g.bytes), where,
                   g.rises, steps, sparkline(g.floors), format_size(g.floors.front()), format_size(g.floors.back()));
    append_stack_lines(out, frames, "      ");
  }
  out.push_back('\n');
}

void write_growth_json(ReportContext& context, JsonTree& json, bool detailed) {
  json.begin_array("growth");
  for (const report::Growth& g : wanted_growth(context, !detailed)) {
    const replay::Site& site = context.replay().sites()[g.site];
    json.begin_object();
    write_device(json, "device", site.device);
    json.number("bytes", g.bytes);
    json.number("windows", uint64_t{g.rises});
    if (detailed) {
      json.begin_array("floors");
      for (uint64_t floor : g.floors) json.number({}, floor);
      json.end_array();
    }
    write_stack(json, "stack", context.stack(site.stack));
    json.end_object();
  }
  json.end_array();
}

extern const Command growth_command;
const Command growth_command{"growth", "stacks whose live memory keeps rising", kHelp, growth_main};

}  // namespace gpumemtrace::cli
