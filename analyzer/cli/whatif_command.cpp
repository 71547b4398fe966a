// gpumemtrace whatif TRACE: a recorded run's PyTorch history (or its heap blocks) replayed through the model of
// PyTorch's caching allocator, under the recorded settings and under others (report/whatif_model.h, docs/whatif.md).
#include <fmt/core.h>

#include <cstdlib>

#include "analyzer/allocator_model/settings.h"
#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/render/whatif_renderers.h"
#include "analyzer/report/whatif_model.h"
#include "common/size_units.h"

namespace gpumemtrace::cli {

namespace {

constexpr std::string_view kWhatifHelp =
    "usage: gpumemtrace whatif [options] TRACE\n"
    "\n"
    "Replays what PyTorch's caching allocator was asked for in a recorded run (the history of the PyTorch\n"
    "snapshots beside TRACE, or TRACE itself when it is a snapshot) through a model of the allocator of\n"
    "PyTorch 2.14.1 (docs/whatif.md), each device with history on its own. A trace without snapshots is replayed\n"
    "from the blocks its own sub-allocator handed out (annotate.h or NVTX heaps), under PyTorch's defaults and\n"
    "against the memory of its heaps. First under the settings the snapshot recorded: how many of the recorded\n"
    "segment allocations and frees the model reproduced, in order, and the peak reserved recorded and replayed.\n"
    "Then under each scenario asked for, one row each: peak reserved, peak fragmentation (reserved -\n"
    "allocated), the largest free block at the worst moment (the first failure, else that peak), cudaMalloc\n"
    "calls, whether and where it runs out of memory (the request, its stack) and the smallest device memory it\n"
    "fits in. Recommends the scenario that fits with the least memory, or says what dominates when none fits.\n"
    "\n"
    "A scenario is the recorded settings with some changed. --set SETTINGS gives one: SETTINGS is\n"
    "key=value[,key=value...] with the options of PYTORCH_CUDA_ALLOC_CONF (expandable_segments,\n"
    "max_split_size_mb, max_non_split_rounding_mb, large_segment_size_mb, garbage_collection_threshold,\n"
    "roundup_power2_divisions, as in --set roundup_power2_divisions=[64:8,>:4]), per_process_memory_fraction and\n"
    "memory (the device's size). Give --set again for another scenario:\n"
    "  gpumemtrace whatif --set expandable_segments=True --set max_split_size_mb=256,memory=24GiB run.trace\n"
    "--explore adds: expandable_segments=True; max_split_size_mb=128; max_split_size_mb=512;\n"
    "roundup_power2_divisions=4; expandable_segments=True,roundup_power2_divisions=4; and, with a memory\n"
    "fraction, garbage_collection_threshold=0.8.\n";

constexpr std::string_view kWhatifExitStatus =
    "Exit status: 0 when the history was replayed, 1 for a bad command line, 2 when the trace has no PyTorch\n"
    "history that can be read nor heap blocks, or a setting is one the model does not take (one line on stderr),\n"
    "3 for a system error.\n";

int fail(const std::string& message) { return command_error("whatif", message); }

uint64_t size_option(const std::string& option, const std::string& value) {
  std::optional<uint64_t> size = parse_size(value);
  if (!size || *size == 0) throw UsageError(fmt::format("{} {}: not a size (like 16GiB)", option, value));
  return *size;
}

int whatif_main(std::span<const std::string> args) {
  CommandLine line(kWhatifHelp, kWhatifExitStatus);
  report::WhatifRequest request;
  std::vector<std::string> memories;
  std::optional<std::string> device, fraction;
  bool json = false;
  std::string path;
  line.repeated("--set", "SETTINGS", request.scenarios, "a scenario: key=value[,key=value...] (above); repeatable");
  line.repeated("--memory", "SIZE", memories, "a scenario: the recorded settings on a device of SIZE; repeatable");
  line.flag("--explore", request.explore, "add the scenarios of the grid above");
  line.option("--device", "SIZE", device,
              "the device's memory, when the trace has no out-of-memory record that says it (else: no limit)");
  line.option("--fraction", "F", fraction,
              "the run's per-process memory fraction (set_per_process_memory_fraction; not in a snapshot)");
  line.flag("--json", json, "JSON instead of text");
  line.operand("trace file", path);
  if (!line.parse(args)) return kExitOk;
  for (const std::string& memory : memories) request.memories.push_back(size_option("--memory", memory));
  if (device) request.device_memory = size_option("--device", *device);
  if (fraction) {
    char* end = nullptr;
    double value = std::strtod(fraction->c_str(), &end);
    if (fraction->empty() || *end != '\0' || !(value > 0 && value <= 1))
      throw UsageError(fmt::format("--fraction {}: not a number in (0, 1]", *fraction));
    request.memory_fraction = value;
  }
  report::WhatifModel model;
  try {
    model = report::whatif_report(path, request);
  } catch (const report::WhatifError& error) {
    return trace_error(path, error.what());
  } catch (const allocator_model::SettingsError& error) {
    return fail(fmt::format("bad setting: {}", error.what()));
  }
  fmt::memory_buffer out;
  if (json)
    render::render_whatif_json(model, out);
  else
    render::render_whatif_text(model, out);
  fmt::print("{}", std::string_view(out.data(), out.size()));
  return kExitOk;
}

}  // namespace

extern const Command whatif_command;
const Command whatif_command{"whatif", "replay PyTorch's allocator under other settings (PYTORCH_CUDA_ALLOC_CONF)",
                             whatif_main};

}  // namespace gpumemtrace::cli
