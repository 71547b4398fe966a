#include "analyzer/render/text_parts.h"
#include "analyzer/render/text_sections.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

void append_account(fmt::memory_buffer& out, const report::AccountFigures& account, bool complete) {
  fmt::format_to(fmt::appender(out),
                 "  {:<18} peak {} at {} ({} live); {} {} in {} allocations; {} allocations, {} frees, {} failed\n",
                 account_name(account), format_size(account.peak_bytes), format_time(account.peak_time_ns),
                 account.peak_count, complete ? "at exit" : "when the trace stops", format_size(account.final_bytes),
                 account.final_count, account.allocations, account.frees, account.failed_allocations);
}

}  // namespace

void append_accounts(fmt::memory_buffer& out, const report::AccountsModel& accounts) {
  fmt::format_to(fmt::appender(out), "memory (requested bytes):\n");
  for (size_t i = 0; i < accounts.devices.size(); ++i) {
    append_account(out, accounts.devices[i], accounts.complete);
    if (!accounts.other_view) continue;
    const report::AccountFigures& other = accounts.other_devices[i];
    fmt::format_to(fmt::appender(out), "  {:<18} {} view: peak {} at {}; {} {}\n", "", report::view_name(*accounts.other_view),
                   format_size(other.peak_bytes), format_time(other.peak_time_ns),
                   accounts.complete ? "at exit" : "when the trace stops", format_size(other.final_bytes));
  }
  for (const report::AccountFigures& account : accounts.other_memory) append_account(out, account, accounts.complete);
  if (accounts.devices.empty() && accounts.other_memory.empty())
    fmt::format_to(fmt::appender(out), "  nothing was allocated\n");
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
