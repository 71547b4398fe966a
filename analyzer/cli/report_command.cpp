#include "analyzer/cli/report_command.h"

#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "analyzer/cli/arguments.h"
#include "analyzer/cli/command.h"
#include "analyzer/cli/report_output.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kCommonOptions =
    "\n"
    "options:\n"
    "  --json           JSON instead of text (see docs/reports.md)\n"
    "  --device N       only device N's memory\n"
    "  --top N          at most N stacks per device (default {})\n"
    "  --min-size SIZE  leave out stacks with less than SIZE, e.g. 1MiB\n"
    "{}"
    "  -h, --help       this text\n"
    "\n"
    "Exit status: 0 when the trace was analyzed (also a truncated one: the report says it is incomplete),\n"
    "1 for a bad command line, 2 when the file is not a readable trace.\n";

uint64_t parse_count(const std::string& option, const std::string& value, uint64_t max) {
  if (value.empty() || value.size() > 10 || value.find_first_not_of("0123456789") != std::string::npos ||
      std::stoull(value) > max)
    throw UsageError(option + " " + value + " is not a number from 0 to " + std::to_string(max));
  return std::stoull(value);
}

// nullopt: --help was printed.
std::optional<ReportOptions> parse(std::span<const std::string> args, const ReportCommand& command) {
  ReportOptions options;
  options.top = command.default_top;
  std::optional<std::string> path;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!options_done && is_help_option(arg)) {
      fmt::print("{}", command.usage_and_purpose);
      fmt::print(fmt::runtime(kCommonOptions), command.default_top,
                 command.takes_width ? "  --width N        columns of the chart (default: the terminal's, or 80)\n" : "");
      return std::nullopt;
    }
    if (!options_done && arg == "--") {
      options_done = true;
    } else if (!options_done && arg == "--json") {
      options.json = true;
    } else if (auto device = options_done ? std::nullopt : option_value(args, i, "--device")) {
      options.device = static_cast<int32_t>(parse_count("--device", *device, INT32_MAX - 1));
    } else if (auto top = options_done ? std::nullopt : option_value(args, i, "--top")) {
      options.top = parse_count("--top", *top, 1'000'000);
    } else if (auto min_size = options_done ? std::nullopt : option_value(args, i, "--min-size")) {
      std::optional<uint64_t> bytes = parse_size(*min_size);
      if (!bytes) throw UsageError("--min-size " + *min_size + " is not a size (e.g. 1MiB, 4096)");
      options.min_size = *bytes;
    } else if (auto width = options_done || !command.takes_width ? std::nullopt : option_value(args, i, "--width")) {
      options.width = static_cast<uint32_t>(parse_count("--width", *width, 10'000));
      if (*options.width < 20) throw UsageError("--width " + *width + " is too narrow (20 columns at least)");
    } else {
      if (!options_done) reject_unknown_option(arg);
      if (path) throw UsageError("expects one trace file, got '" + *path + "' and '" + arg + "'");
      path = arg;
    }
  }
  if (!path) throw UsageError("expects a trace file");
  options.path = *path;
  return options;
}

// "gpumemtrace: reading TRACE: 42%" on a terminal, once reading has taken a second.
class Progress {
 public:
  explicit Progress(std::string path) : path_(std::move(path)), enabled_(isatty(STDERR_FILENO) == 1) {}
  ~Progress() {
    if (shown_) fmt::print(stderr, "\r\033[K");
  }
  void operator()(uint64_t offset, uint64_t size) {
    if (!enabled_ || size == 0) return;
    if (std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
    shown_ = true;
    fmt::print(stderr, "\rgpumemtrace: reading {}: {}%", path_, offset * 100 / size);
    std::fflush(stderr);
  }

 private:
  std::string path_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

report::SiteFilter ReportContext::filter(bool device_memory_only) const {
  report::SiteFilter filter;
  filter.device = options_.device;
  filter.device_memory_only = device_memory_only;
  filter.min_size = options_.min_size;
  filter.top = options_.top;
  return filter;
}

const std::vector<symbolize::Frame>& ReportContext::stack(replay::StackId stack) {
  auto it = stacks_.find(stack);
  if (it == stacks_.end()) it = stacks_.emplace(stack, symbolizer_.stack(replay().stacks().frames(stack))).first;
  return it->second;
}

int run_report(std::span<const std::string> args, const ReportCommand& command) {
  std::optional<ReportOptions> options = parse(args, command);
  if (!options) return kExitOk;

  report::Analysis analysis;
  try {
    Progress progress(options->path);
    analysis = report::analyze(options->path, {}, std::ref(progress));
  } catch (const trace::OpenError& error) {
    return trace_error(options->path, error.what());
  }
  if (analysis.trace.corrupt) return trace_error(options->path, analysis.trace.error);

  symbolize::Symbolizer symbolizer(analysis.replay->stacks().modules(), [](std::string_view warning) {
    fmt::print(stderr, "gpumemtrace: warning: {}\n", warning);
  });
  ReportContext context(*options, analysis, symbolizer);
  fmt::memory_buffer out;
  if (options->json) {
    JsonTree json(out);
    json.begin_object();
    write_trace(json, context.trace());
    command.json(context, json);
    json.end_object();
    out.push_back('\n');
  } else {
    append_trace_header(out, context);
    out.push_back('\n');
    command.text(context, out);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace gpumemtrace::cli
