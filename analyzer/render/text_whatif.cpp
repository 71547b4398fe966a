#include "analyzer/render/whatif_renderers.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

namespace {

std::string device_name(int32_t device) {
  return device == trace::kNoDevice ? std::string("device not said") : fmt::format("device {}", device);
}

void render_device(const report::WhatifDevice& d, fmt::memory_buffer& out) {
  auto to = fmt::appender(out);
  bool heaps = d.input == report::WhatifInput::HeapBlocks;
  fmt::format_to(to, "\n{}: input: {}\n", device_name(d.device), d.input_text);
  fmt::format_to(to, "Device memory: {}\n",
                 d.device_memory ? fmt::format("{} (from {})", format_size(d.device_memory), d.device_memory_from)
                                 : std::string("not in the trace (--device SIZE); replays without a limit"));
  const report::WhatifOutcome& recorded = d.outcomes.at(0);
  std::string recorded_peak = d.recorded_peak_reserved ? format_exact_size(*d.recorded_peak_reserved) : "not known";
  if (heaps) {
    fmt::format_to(to, "Replay under PyTorch's defaults: {} requests; peak reserved {} by the program's heaps{}, {} "
                   "by the model\n  segment events not compared: {}\n",
                   d.requests, recorded_peak, d.recorded_peak_reserved ? "" : " (a heap did not say its memory)",
                   format_exact_size(recorded.peak_reserved), d.not_compared);
  } else {
    fmt::format_to(to, "Replay under the recorded settings: {} requests; {} of {} segment events as recorded; peak "
                   "reserved {} recorded, {} replayed{}\n",
                   d.requests, d.matched_segment_events, d.recorded_segment_events, recorded_peak,
                   format_exact_size(recorded.peak_reserved),
                   d.recorded_peak_reserved == recorded.peak_reserved ? " (the same)" : "");
  }
  if (!d.first_difference.empty()) fmt::format_to(to, "  first difference: {}\n", d.first_difference);
  if (!d.initial_state_empty)
    fmt::format_to(to, "  the history began with segments already allocated: the replay starts empty\n");
  size_t width = 8;
  for (const report::WhatifOutcome& o : d.outcomes) width = std::max(width, o.name.size());
  fmt::format_to(to, "\n{:<{}}  {:>13}  {:>13}  {:>13}  {:>10}  {:>13}  {:>11}\n", "scenario", width,
                 "peak reserved", "peak frag.", "largest free", "cudaMalloc", "out of memory", "fits in");
  for (const report::WhatifOutcome& o : d.outcomes)
    fmt::format_to(to, "{:<{}}  {:>13}  {:>13}  {:>13}  {:>10}  {:>13}  {:>11}\n", o.name, width,
                   format_size(o.peak_reserved), format_size(o.peak_fragmentation),
                   format_size(o.largest_free_at_worst), o.device_allocs,
                   o.out_of_memory ? fmt::format("at request {}", o.out_of_memory->request) : "no",
                   o.fits_in ? format_size(o.fits_in) : "-");
  for (const report::WhatifOutcome& o : d.outcomes) {
    if (!o.out_of_memory) continue;
    fmt::format_to(to, "\n{}: out of memory at request {}: {} on stream {:#x}{}\n", o.name, o.out_of_memory->request,
                   format_exact_size(o.out_of_memory->size), o.out_of_memory->stream,
                   o.out_of_memory->phase.empty() ? "" : ", in phase " + o.out_of_memory->phase);
    for (const std::string& frame : o.out_of_memory->stack) fmt::format_to(to, "    {}\n", frame);
  }
  fmt::format_to(to, "\n");
  if (d.recommended) {
    const report::WhatifOutcome& best = d.outcomes[*d.recommended];
    if (*d.recommended == 0)
      fmt::format_to(to, "Recommended: the {}: no scenario fits in less than {}\n",
                     heaps ? "defaults" : "recorded settings", format_size(best.fits_in));
    else
      fmt::format_to(to, "Recommended: {}: fits in {} instead of {}; peak reserved {} instead of {}\n", best.name,
                     format_size(best.fits_in), format_size(recorded.fits_in), format_size(best.peak_reserved),
                     format_size(recorded.peak_reserved));
  } else {
    fmt::format_to(to, "No scenario fits on the device. What dominates: {}\n", d.none_fits_because);
  }
}

}  // namespace

void render_whatif_text(const report::WhatifModel& model, fmt::memory_buffer& out) {
  auto to = fmt::appender(out);
  fmt::format_to(to, "What if: PyTorch's caching allocator (model of 2.14.1) replaying {}, {}\n", model.path,
                 model.devices.size() == 1 ? device_name(model.devices[0].device)
                                           : fmt::format("{} devices", model.devices.size()));
  bool history = !model.devices.empty() && model.devices[0].input == report::WhatifInput::PytorchHistory;
  std::string fraction = model.memory_fraction ? fmt::format(", memory fraction {}", *model.memory_fraction) : "";
  if (history)
    fmt::format_to(to, "Recorded settings: PYTORCH_CUDA_ALLOC_CONF=\"{}\"{}\n", model.alloc_conf, fraction);
  else
    fmt::format_to(to, "Settings: PyTorch's defaults (no snapshot records any){}\n", fraction);
  for (const report::WhatifDevice& d : model.devices) render_device(d, out);
}

}  // namespace gpumemtrace::render
