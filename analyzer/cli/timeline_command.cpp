// gpumemtrace timeline TRACE: live memory per device over time, drawn with block characters.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "analyzer/cli/command.h"
#include "analyzer/cli/report_output.h"
#include "analyzer/cli/report_sections.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kHelp =
    "usage: gpumemtrace timeline [options] TRACE\n"
    "\n"
    "Live memory of each device over time (device memory: cuMemAlloc, async pools, VMM physical memory\n"
    "and arrays), and of managed and pinned host memory when there is any, drawn in the terminal from the\n"
    "first allocation to the end of the trace. Each column is the most that was live during its slice of\n"
    "time. --top and --min-size do not apply.\n";

constexpr int kRows = 8;
constexpr size_t kLabelWidth = 11;  // "  1.25 GiB ┤"
constexpr std::string_view kEighths[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

uint32_t chart_width(const ReportContext& context) {
  uint32_t width = 80;
  if (context.options().width) {
    width = *context.options().width;
  } else if (winsize size{}; isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col) {
    width = size.ws_col;
  } else if (const char* columns = std::getenv("COLUMNS"); columns && std::atoi(columns) >= 20) {
    width = static_cast<uint32_t>(std::atoi(columns));
  }
  return width - static_cast<uint32_t>(kLabelWidth) - 1;
}

// The windows stretched or squeezed to `columns`, each column the most of the windows it covers.
std::vector<uint64_t> to_columns(const std::vector<uint64_t>& windows, uint32_t columns) {
  std::vector<uint64_t> out(columns, 0);
  for (uint32_t c = 0; c < columns; ++c) {
    size_t begin = c * windows.size() / columns;
    size_t end = std::max(begin + 1, (c + 1) * windows.size() / columns);
    for (size_t w = begin; w < end; ++w) out[c] = std::max(out[c], windows[w]);
  }
  return out;
}

std::vector<replay::AccountId> shown_accounts(const ReportContext& context) {
  std::vector<replay::AccountId> out;
  const replay::Accounts& accounts = context.replay().accounts();
  report::SiteFilter filter = context.filter(false);
  for (replay::AccountId id : accounts.devices())
    if (report::wanted_account(accounts[id], filter)) out.push_back(id);
  for (replay::AccountId id : {replay::Accounts::kManaged, replay::Accounts::kHostPinned})
    if (accounts[id].allocations > 0 && report::wanted_account(accounts[id], filter)) out.push_back(id);
  return out;
}

void append_chart(fmt::memory_buffer& out, const std::vector<uint64_t>& columns, uint64_t peak) {
  auto o = fmt::appender(out);
  for (int row = 0; row < kRows; ++row) {
    std::string label = row == 0 ? format_size(peak) : row == kRows - 1 ? std::string("0 B") : std::string();
    fmt::format_to(o, "{:>{}} ┤", label, kLabelWidth - 1);
    for (uint64_t value : columns) {
      // Eighths of a row: the whole chart is kRows * 8 levels high.
      uint64_t level = peak ? (value * kRows * 8 + peak - 1) / peak : 0;
      int64_t here = static_cast<int64_t>(level) - (kRows - 1 - row) * 8;
      out.append(kEighths[std::clamp<int64_t>(here, 0, 8)]);
    }
    out.push_back('\n');
  }
}

void render_text(ReportContext& context, fmt::memory_buffer& out) {
  const replay::Replay& replay = context.replay();
  auto o = fmt::appender(out);
  if (!replay.timeline_clock().started()) {
    fmt::format_to(o, "no memory was allocated\n");
    return;
  }
  uint32_t columns = chart_width(context);
  uint64_t start = replay.timeline_clock().origin_ns();
  std::vector<replay::AccountId> accounts = shown_accounts(context);
  if (accounts.empty()) fmt::format_to(o, "no memory on device {}\n", context.options().device.value_or(0));
  for (replay::AccountId id : accounts) {
    const replay::Account& account = replay.accounts()[id];
    fmt::format_to(o, "{}: peak {} at {}\n", account_name(account), format_size(account.peak_bytes),
                   format_time(account.peak_time_ns));
    append_chart(out, to_columns(replay.timeline(id), columns), account.peak_bytes);
    fmt::format_to(o, "{:>{}} └", "", kLabelWidth - 1);
    for (uint32_t c = 0; c < columns; ++c) out.append(std::string_view("─"));
    std::string from = format_time(start), to = format_time(replay.end_time_ns());
    fmt::format_to(o, "\n{:>{}}  {}{:>{}}\n\n", "", kLabelWidth - 1, from, to,
                   columns > from.size() ? columns - from.size() : 0);
  }
}

void write_json(ReportContext& context, JsonTree& json) {
  const replay::Replay& replay = context.replay();
  json.number("start_ns", replay.timeline_clock().origin_ns());
  json.number("window_ns", replay.timeline_clock().width_ns());
  json.begin_array("series");
  for (replay::AccountId id : shown_accounts(context)) {
    const replay::Account& account = replay.accounts()[id];
    json.begin_object();
    write_device(json, "device", account.device);
    json.string("memory", account.category == replay::Category::Device    ? "device"
                          : account.category == replay::Category::Managed ? "managed"
                                                                          : "host-pinned");
    json.number("peak_bytes", account.peak_bytes);
    json.begin_array("max_bytes");
    if (replay.timeline_clock().started())
      for (uint64_t value : replay.timeline(id)) json.number({}, value);
    json.end_array();
    json.end_object();
  }
  json.end_array();
}

int timeline_main(std::span<const std::string> args) {
  return run_report(args, ReportCommand{"timeline", kHelp, 10, true, render_text, write_json});
}

}  // namespace

extern const Command timeline_command;
const Command timeline_command{"timeline", "live memory per device over time, as a chart", kHelp, timeline_main};

}  // namespace gpumemtrace::cli
