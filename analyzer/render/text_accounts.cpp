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
  for (const report::AccountFigures& account : accounts.devices) append_account(out, account, accounts.complete);
  for (const report::AccountFigures& account : accounts.other_memory) append_account(out, account, accounts.complete);
  if (accounts.devices.empty() && accounts.other_memory.empty())
    fmt::format_to(fmt::appender(out), "  nothing was allocated\n");
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
