// gpumemtrace leaks TRACE: what the process still held when it exited, grouped by call stack.
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/cli/report_sections.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace leaks [options] TRACE\n"
    "\n"
    "The allocations still live when the process exited (device memory, managed and pinned host memory),\n"
    "grouped by call stack, largest first. Leaks are only known for a complete trace: for a process that\n"
    "was killed, this lists what was live when the trace stops.\n";

std::string_view category_name(replay::Category category) {
  switch (category) {
    case replay::Category::Managed:
      return "managed";
    case replay::Category::HostPinned:
      return "host-pinned";
    default:
      return "device";
  }
}

std::vector<replay::SiteShare> live_at_end(ReportContext& context, bool device_memory_only) {
  const replay::Replay& replay = context.replay();
  return report::rank_sites(replay, context.filter(device_memory_only), [&](replay::SiteId id) {
    const replay::Site& site = replay.sites()[id];
    return replay::SiteShare{id, site.bytes, site.count};
  });
}

void write_sites(ReportContext& context, JsonTree& json, std::string_view key, bool with_kind) {
  json.begin_array(key);
  for (const replay::SiteShare& share : live_at_end(context, !with_kind)) {
    const replay::Site& site = context.replay().sites()[share.site];
    json.begin_object();
    write_device(json, "device", site.device);
    if (with_kind) json.string("kind", category_name(site.category));
    json.number("bytes", share.bytes);
    json.number("allocations", share.count);
    write_stack(json, "stack", context.stack(site.stack));
    json.end_object();
  }
  json.end_array();
}

int leaks_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{"leaks", kHelp, 10, false,
                                        [](ReportContext& c, fmt::memory_buffer& out) { append_leaks_text(c, out, true); },
                                        [](ReportContext& c, JsonTree& json) {
                                          write_accounts_json(c, json);
                                          write_leaks_json(c, json, true);
                                        }});
}

}  // namespace

void append_leaks_text(ReportContext& context, fmt::memory_buffer& out, bool detailed) {
  auto o = fmt::appender(out);
  std::vector<replay::SiteShare> shares = live_at_end(context, false);
  uint64_t bytes = 0, count = 0;
  report::SiteFilter filter = context.filter(false);
  const replay::Accounts& accounts = context.replay().accounts();
  for (replay::AccountId id = 0; id < accounts.size(); ++id) {
    if (!report::wanted_account(accounts[id], filter)) continue;
    bytes += accounts[id].live_bytes;
    count += accounts[id].live_count;
  }
  bool complete = context.trace().complete;
  if (shares.empty()) {
    std::string where = context.options().device ? fmt::format(" on device {}", *context.options().device) : "";
    fmt::format_to(o, "{}{}\n\n", complete ? "no leaks: nothing was live when the process exited" : "nothing was live when the trace stops", where);
    return;
  }
  fmt::format_to(o, "{}: {} in {} allocations\n",
                 complete ? "leaks (live when the process exited)"
                          : "live when the trace stops (not necessarily leaks: the trace is incomplete)",
                 format_size(bytes), count);
  for (const replay::SiteShare& share : shares) {
    const replay::Site& site = context.replay().sites()[share.site];
    const replay::Account& account = context.replay().accounts()[site.account];
    const auto& frames = context.stack(site.stack);
    if (!detailed) {
      fmt::format_to(o, "  {:>10}  {:>5}×  {:<18} {}\n", format_size(share.bytes), share.count, account_name(account),
                     compact_stack(frames));
      continue;
    }
    fmt::format_to(o, "  {} in {} allocations of {}\n", format_size(share.bytes), share.count, account_name(account));
    append_stack_lines(out, frames, "      ");
  }
  out.push_back('\n');
}

void write_leaks_json(ReportContext& context, JsonTree& json, bool detailed) {
  if (context.trace().complete) {
    write_sites(context, json, "leaks", detailed);
    return;
  }
  json.begin_array("leaks");  // only a complete trace says what was never freed
  json.end_array();
  if (detailed) write_sites(context, json, "live_at_stop", true);
}

extern const Command leaks_command;
const Command leaks_command{"leaks", "what was never freed, by call stack", kHelp, leaks_main};

}  // namespace gpumemtrace::cli
