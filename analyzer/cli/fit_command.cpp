// gpumemtrace fit RUN1 RUN2 [RUN...]: runs of one program at different batch sizes, each stack's bytes at the
// peak fitted as constant or growing with the batch, and the largest batch that fits a device (report/batch_fit.h).
#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/run_profiles.h"
#include "analyzer/cli/standard_output.h"
#include "analyzer/render/fit_renderers.h"
#include "analyzer/report/batch_fit.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kFitHelp =
    "usage: gpumemtrace fit [--batch RUN=N]... [--memory SIZE] [--margin SIZE] [--raw] [--json] RUN1 RUN2 [RUN...]\n"
    "\n"
    "Reads runs of one program at different batch sizes (each RUN a trace, or a directory of per-rank traces)\n"
    "and fits each stack's bytes at the run's peak as constant or as growing with the batch (bytes per\n"
    "sample), then prints the largest batch whose bytes fit the device's memory less the margin. A run's\n"
    "batch is the `batch` parameter it recorded (gpumemtrace run --param batch=32), or --batch RUN=N.\n"
    "Where the traces have PyTorch's history (the snapshots beside them), the answer is checked through the\n"
    "model of PyTorch's caching allocator (docs/whatif.md): the history of the largest batch, each request\n"
    "sized for the batch tried, replayed on the device, so the cache's rounding and fragmentation count.\n"
    "Otherwise the answer is on raw bytes. docs/reports.md (\"fit\") defines every figure.\n";

constexpr std::string_view kFitExitStatus =
    "Exit status: 0 when the runs were fitted, 1 for a bad command line, 2 when a run cannot be read or the runs\n"
    "cannot be fitted (of different programs, without a batch, fewer than two batch sizes; one line on\n"
    "stderr), 3 for a system error.\n";

int fail(const std::string& message) { return command_error("fit", message); }

// --batch RUN=N, by RUN as given.
std::map<std::string, uint64_t> batch_options(const std::vector<std::string>& values) {
  std::map<std::string, uint64_t> out;
  for (const std::string& value : values) {
    size_t equals = value.rfind('=');
    if (equals == std::string::npos || equals == 0)
      throw UsageError(fmt::format("--batch {}: not RUN=N", value));
    uint64_t batch = parse_number("--batch", value.substr(equals + 1), UINT32_MAX);
    if (batch == 0) throw UsageError(fmt::format("--batch {}: a batch is at least 1", value));
    out[value.substr(0, equals)] = batch;
  }
  return out;
}

// The batch a run recorded: its traces' `batch` parameter (all the same).
std::optional<uint64_t> recorded_batch(const std::string& path, const std::vector<RunParam>& params) {
  for (const RunParam& param : params) {
    if (param.name != "batch") continue;
    char* end = nullptr;
    unsigned long long value = std::strtoull(param.value.c_str(), &end, 10);
    if (param.value.empty() || *end != '\0' || value == 0)
      throw report::FitError(fmt::format("{}: its parameter batch={} is not a batch size", path, param.value));
    return value;
  }
  return std::nullopt;
}

report::FitRun read_run(const std::string& path, const std::map<std::string, uint64_t>& batches) {
  report::FitRun run;
  run.path = path;
  std::optional<uint64_t> recorded;
  read_traces(
      path, {}, {.join_snapshots = false},
      [&](const analysis::Analysis& analysis, const report::SymbolizeStack& symbolize) {
        report::RunProfile profile = report::run_profile(analysis, symbolize);
        if (run.program.empty())
          run.program = report::program_of(analysis.trace);
        if (!recorded) recorded = recorded_batch(analysis.trace.path, analysis.trace.params);
        run.traces.push_back({std::move(profile), report::device_totals_of(analysis)});
      },
      [&](const std::string& trace, const std::string& reason) { throw InputError(trace, reason); });
  // A launcher or data loader that allocated nothing is not one of the ranks.
  size_t traces = run.traces.size();
  std::erase_if(run.traces, [&](const report::FitTrace& t) { return report::left_out_of_set(t.profile, traces); });
  if (auto given = batches.find(path); given != batches.end()) {
    run.batch = given->second;
    run.batch_from = "--batch";
  } else if (recorded) {
    run.batch = *recorded;
    run.batch_from = "param batch";
  } else {
    throw report::FitError(fmt::format("{}: no batch size: the run recorded no `batch` parameter (gpumemtrace run "
                                       "--param batch=N) and no --batch {}=N was given",
                                       path, path));
  }
  return run;
}

int fit_main(std::span<const std::string> args) {
  CommandLine line(kFitHelp, kFitExitStatus);
  std::vector<std::string> batch_values, paths;
  std::optional<std::string> memory, margin;
  bool json = false, raw = false;
  line.repeated("--batch", "RUN=N", batch_values, "RUN's batch size, when it recorded none; repeatable");
  line.option("--memory", "SIZE", memory, "the device's memory (default: the traced device's), e.g. 80GiB");
  line.option("--margin", "SIZE", margin, "memory kept free: the batch fits in the memory less this (default 0)");
  line.flag("--raw", raw, "on raw bytes only, even where PyTorch's history is there");
  line.flag("--json", json, "JSON instead of text");
  line.operands_from("run", paths, 2);
  if (!line.parse(args)) return kExitOk;
  std::map<std::string, uint64_t> batches = batch_options(batch_values);
  for (const auto& [run, batch] : batches)
    if (std::find(paths.begin(), paths.end(), run) == paths.end())
      throw UsageError(fmt::format("--batch {}={}: {} is not one of the runs", run, batch, run));
  report::FitRequest request;
  if (memory) {
    request.memory = parse_size_option("--memory", *memory);
    if (*request.memory == 0) throw UsageError("--memory 0: a device has some memory");
  }
  if (margin) request.margin = parse_size_option("--margin", *margin);
  request.replay = !raw;

  report::BatchFit model;
  try {
    std::vector<report::FitRun> runs;
    for (const std::string& path : paths) runs.push_back(read_run(path, batches));
    model = report::fit_batch(std::move(runs), request);
  } catch (const InputError& error) {
    return trace_error(error.path, error.what());
  } catch (const report::FitError& error) {
    return fail(error.what());
  }
  fmt::memory_buffer out;
  if (json)
    render::render_fit_json(model, out);
  else
    render::render_fit_text(model, out);
  write_stdout(std::string_view(out.data(), out.size()));
  return kExitOk;
}

}  // namespace

extern const Command fit_command;
const Command fit_command{"fit", "the largest batch that fits a device, from runs at different batch sizes", fit_main};

}  // namespace gpumemtrace::cli
