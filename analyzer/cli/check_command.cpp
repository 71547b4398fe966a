// gpumemtrace check TRACE|DIR: GPU memory budgets for CI. Holds each trace (each rank) against limits
// and a baseline; exits 1 when a limit is exceeded.
#include <fmt/core.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/run_profiles.h"
#include "analyzer/cli/standard_output.h"
#include "analyzer/render/budget/budget_output.h"
#include "common/size_units.h"
#include "common/terminal_text.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kCheckHelp =
    "usage: gpumemtrace check [options] TRACE|DIR\n"
    "\n"
    "Holds a trace, or every trace in a directory (one per rank or process), against GPU memory budgets,\n"
    "per device and rank: the peak of device memory, the bytes leaked (still allocated at a normal exit),\n"
    "the growth of the stacks that kept growing, the out-of-memory failures, the steps until a device is\n"
    "forecast to run out of memory (see summary); and, with --baseline, the peak and leaks of a committed\n"
    "baseline (gpumemtrace baseline) plus a tolerance, naming the stacks that grew most. Prints one line\n"
    "per exceeded limit, then a line with the counts; for a directory, also the per-rank table and the rank\n"
    "that holds the most. SIZE is bytes or 512MiB, 6GiB, 1.5GB (K, M, G, T are binary: GB = GiB); PCT is a\n"
    "percentage of the baseline's figure, like 5%. --from and --to check what was allocated in a window of\n"
    "the run only; its leaks are what it still held at --to.\n";

// check's own exit status: CI tells "over budget" (1) from "could not check" (2, 3).
constexpr std::string_view kCheckExitStatus =
    "Exit status (check's own, unlike the other commands): 0 when every limit holds, 1 when a limit is\n"
    "exceeded, 2 when an input is unusable (a bad command line, size or tolerance too, an unreadable trace,\n"
    "a malformed or older baseline: one line on stderr), 3 for a system error (the output or the --junit\n"
    "file cannot be written, out of memory). A bad command line is 2 here, not 1, so that 1 always means\n"
    "over budget.\n";

uint64_t size_option(const std::string& option, const std::optional<std::string>& value) {
  std::optional<uint64_t> bytes = parse_size(*value);
  if (!bytes) throw UsageError(option + " " + *value + " is not a size (e.g. 512MiB, 6GiB, 1.5GB, 4096)");
  return *bytes;
}

report::Tolerance tolerance_option(const std::string& value) {
  report::Tolerance tolerance;
  if (!value.empty() && value.back() == '%') {
    std::string number = value.substr(0, value.size() - 1);
    char* end = nullptr;
    double percent = number.empty() || !std::isdigit(static_cast<unsigned char>(number[0]))
                         ? -1
                         : std::strtod(number.c_str(), &end);
    if (percent < 0 || !std::isfinite(percent) || end != number.c_str() + number.size())
      throw UsageError("--tolerance " + value + " is not a percentage (e.g. 5%, 0.5%)");
    tolerance.percent = percent;
    return tolerance;
  }
  std::optional<uint64_t> bytes = parse_size(value);
  if (!bytes) throw UsageError("--tolerance " + value + " is neither a percentage (5%) nor a size (64MiB)");
  tolerance.bytes = *bytes;
  return tolerance;
}

int check(std::span<const std::string> args) {
  CommandLine line(kCheckHelp, kCheckExitStatus);
  std::optional<std::string> max_peak, max_leak, max_ooms, max_growth, max_forecast_steps, device, baseline, tolerance, junit, top, from, to;
  bool json = false;
  std::string path;
  line.option("--max-peak", "SIZE", max_peak, "the most device memory any device may have held at once");
  line.option("--max-leak", "SIZE", max_leak, "the most device memory any device may still hold at a normal exit");
  line.option("--max-growth", "SIZE", max_growth, "the most the growing stacks of a device may have grown (see growth)");
  line.option("--max-ooms", "N", max_ooms, "the most out-of-memory failures a device may have");
  line.option("--max-forecast-steps", "N", max_forecast_steps,
              "fail when a device is forecast to run out of memory within N steps (see summary)");
  line.option("--device", "N", device, "check device N only");
  line.option("--baseline", "FILE", baseline, "the peak and leaks may not exceed this baseline's (gpumemtrace baseline)");
  line.option("--tolerance", "PCT|SIZE", tolerance, "how much above the baseline still passes: 5% or 64MiB (default 0)");
  line.option("--top", "N", top, "stacks listed with a failed baseline check (default 5)");
  declare_time_window(line, from, to);
  line.option("--junit", "FILE", junit, "also write the results as JUnit XML to FILE (for Jenkins, GitLab)");
  line.flag("--json", json, "print JSON instead of text (docs/reports.md)");
  line.operand("trace file or directory", path);
  if (!line.parse(args)) return kExitOk;

  report::CheckOptions options;
  if (max_peak) options.limits.max_peak = size_option("--max-peak", max_peak);
  if (max_leak) options.limits.max_leak = size_option("--max-leak", max_leak);
  if (max_growth) options.limits.max_growth = size_option("--max-growth", max_growth);
  if (max_ooms) options.limits.max_ooms = parse_count("--max-ooms", *max_ooms, 1'000'000'000);
  if (max_forecast_steps)
    options.limits.max_forecast_steps = parse_count("--max-forecast-steps", *max_forecast_steps, 1'000'000'000'000);
  if (device) options.device = static_cast<int32_t>(parse_count("--device", *device, INT32_MAX - 1));
  if (top) options.top_stacks = parse_count("--top", *top, 1'000'000);
  TimeWindow window = parse_time_window(from, to);
  replay::ReplayOptions replay;
  replay.selection.from_ns = window.from_ns;
  replay.selection.to_ns = window.to_ns;
  if (tolerance && !baseline) throw UsageError("--tolerance needs --baseline");
  if (tolerance) options.tolerance = tolerance_option(*tolerance);
  if (!max_peak && !max_leak && !max_growth && !max_ooms && !max_forecast_steps && !baseline)
    throw UsageError(
        "nothing to check: give --max-peak, --max-leak, --max-growth, --max-ooms, --max-forecast-steps or --baseline");

  std::vector<report::RunProfile> baseline_runs, runs;
  try {
    if (baseline) baseline_runs = load_baseline(*baseline);
    runs = load_traces(path, replay);
  } catch (const InputError& error) {
    return trace_error(error.path, error.what());
  }
  if (baseline) options.baseline = &baseline_runs;
  report::CheckModel model = report::check_budgets(runs, options);

  if (junit) {
    fmt::memory_buffer xml;
    render::junit_check(model, xml);
    write_output_file(*junit, std::string_view(xml.data(), xml.size()));
  }
  fmt::memory_buffer out;
  if (json) render::json_check(model, out);
  else render::text_check(model, out);
  write_stdout(std::string_view(out.data(), out.size()));
  flush_stdout();
  return model.passed() ? kExitOk : kExitOverBudget;
}

int check_main(std::span<const std::string> args) {
  try {
    return check(args);
  } catch (const UsageError& error) {  // 2, not 1: check's 1 means over budget
    fmt::print(stderr, "gpumemtrace check: {} (see gpumemtrace check --help)\n", terminal_text(error.what()));
    return kExitBadTrace;
  }
}

}  // namespace

extern const Command check_command;
const Command check_command{"check", "hold traces against GPU memory budgets and a baseline (for CI)", check_main};

}  // namespace gpumemtrace::cli
