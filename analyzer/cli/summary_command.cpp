// gpumemtrace summary TRACE: the whole story of a trace in one page (or the JSON contract of docs/reports.md).
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/cli/report_sections.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace summary [options] TRACE\n"
    "\n"
    "One page about a trace: per device the peak of device memory (when, and how many allocations were\n"
    "live), what was still allocated at exit, the counts; managed and pinned host memory apart; the\n"
    "largest stacks at the peak, the leaks, the stacks that kept growing, the out-of-memory failures with\n"
    "their verdict, and fragmentation where the trace knows it. Sizes are the bytes the program asked for.\n"
    "The other commands (peak, leaks, growth, oom, fragmentation, timeline) show each part in detail.\n";

void append_account(fmt::memory_buffer& out, const replay::Account& account, bool complete) {
  fmt::format_to(fmt::appender(out),
                 "  {:<18} peak {} at {} ({} live); {} {} in {} allocations; {} allocations, {} frees, {} failed\n",
                 account_name(account), format_size(account.peak_bytes), format_time(account.peak_time_ns),
                 account.peak_count, complete ? "at exit" : "when the trace stops", format_size(account.live_bytes),
                 account.live_count, account.allocations, account.frees, account.failed_allocations);
}

void render_text(ReportContext& context, fmt::memory_buffer& out) {
  const replay::Accounts& accounts = context.replay().accounts();
  report::SiteFilter filter = context.filter(false);
  fmt::format_to(fmt::appender(out), "memory (requested bytes):\n");
  bool any = false;
  for (replay::AccountId id : accounts.devices())
    if (report::wanted_account(accounts[id], filter)) append_account(out, accounts[id], context.trace().complete), any = true;
  for (replay::AccountId id : {replay::Accounts::kManaged, replay::Accounts::kHostPinned}) {
    const replay::Account& account = accounts[id];
    if ((account.allocations > 0 || account.failed_allocations > 0) && report::wanted_account(account, filter))
      append_account(out, account, context.trace().complete), any = true;
  }
  if (!any) fmt::format_to(fmt::appender(out), "  nothing was allocated\n");
  out.push_back('\n');
  append_peak_text(context, out, false);
  append_leaks_text(context, out, false);
  append_growth_text(context, out, false);
  append_oom_text(context, out, false);
  append_fragmentation_text(context, out, false);
}

void write_json(ReportContext& context, JsonTree& json) {
  write_accounts_json(context, json);
  write_peak_json(context, json);
  write_leaks_json(context, json, false);
  write_growth_json(context, json, false);
  write_ooms_json(context, json, false);
}

int summary_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{"summary", kHelp, 5, false, render_text, write_json});
}

void write_account_fields(JsonTree& json, const replay::Account& account, bool complete) {
  json.number("peak_bytes", account.peak_bytes);
  json.number("peak_time_ns", account.peak_time_ns);
  json.number("final_bytes", account.live_bytes);
  json.number("allocations", account.allocations);
  json.number("frees", account.frees);
  json.number("leaked_allocations", complete ? account.live_count : 0);
  json.number("failed_allocations", account.failed_allocations);
}

}  // namespace

void write_accounts_json(ReportContext& context, JsonTree& json) {
  const replay::Accounts& accounts = context.replay().accounts();
  bool complete = context.trace().complete;
  json.begin_array("devices");
  for (replay::AccountId id : accounts.devices()) {
    if (!report::wanted_account(accounts[id], context.filter())) continue;
    json.begin_object();
    write_device(json, "device", accounts[id].device);
    write_account_fields(json, accounts[id], complete);
    json.end_object();
  }
  json.end_array();
  json.begin_object("managed");
  write_account_fields(json, accounts[replay::Accounts::kManaged], complete);
  json.end_object();
  json.begin_object("host_pinned");
  write_account_fields(json, accounts[replay::Accounts::kHostPinned], complete);
  json.end_object();
}

extern const Command summary_command;
const Command summary_command{"summary", "peak, leaks, growth, OOMs and fragmentation of a trace", kHelp,
                              summary_main};

}  // namespace gpumemtrace::cli
