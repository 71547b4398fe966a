#include "analyzer/render/whatif_renderers.h"
#include "common/size_units.h"

namespace gpumemtrace::render {

void render_whatif_text(const report::WhatifModel& model, fmt::memory_buffer& out) {
  auto to = fmt::appender(out);
  fmt::format_to(to, "What if: PyTorch's caching allocator (model of 2.14.1) replaying {}, device {}\n", model.path,
                 model.device);
  fmt::format_to(to, "Recorded settings: PYTORCH_CUDA_ALLOC_CONF=\"{}\"{}\n", model.alloc_conf,
                 model.memory_fraction ? fmt::format(", memory fraction {}", *model.memory_fraction) : "");
  fmt::format_to(to, "Device memory: {}\n",
                 model.device_memory ? fmt::format("{} (from {})", format_size(model.device_memory),
                                                   model.device_memory_from)
                                     : std::string("not in the trace (--device SIZE); replays without a limit"));
  const report::WhatifOutcome& recorded = model.outcomes.at(0);
  fmt::format_to(to, "Replay under the recorded settings: {} requests; {} of {} segment events as recorded; peak "
                 "reserved {} recorded, {} replayed{}\n",
                 model.requests, model.matched_segment_events, model.recorded_segment_events,
                 format_exact_size(model.recorded_peak_reserved), format_exact_size(recorded.peak_reserved),
                 model.recorded_peak_reserved == recorded.peak_reserved ? " (the same)" : "");
  if (!model.first_difference.empty()) fmt::format_to(to, "  first difference: {}\n", model.first_difference);
  if (!model.initial_state_empty)
    fmt::format_to(to, "  the history began with segments already allocated: the replay starts empty\n");
  size_t width = 8;
  for (const report::WhatifOutcome& o : model.outcomes) width = std::max(width, o.name.size());
  fmt::format_to(to, "\n{:<{}}  {:>13}  {:>13}  {:>13}  {:>10}  {:>13}  {:>11}\n", "scenario", width,
                 "peak reserved", "peak frag.", "largest free", "cudaMalloc", "out of memory", "fits in");
  for (const report::WhatifOutcome& o : model.outcomes)
    fmt::format_to(to, "{:<{}}  {:>13}  {:>13}  {:>13}  {:>10}  {:>13}  {:>11}\n", o.name, width,
                   format_size(o.peak_reserved), format_size(o.peak_fragmentation),
                   format_size(o.largest_free_at_worst), o.device_allocs,
                   o.out_of_memory ? fmt::format("at request {}", o.out_of_memory->request) : "no",
                   o.fits_in ? format_size(o.fits_in) : "-");
  for (const report::WhatifOutcome& o : model.outcomes) {
    if (!o.out_of_memory) continue;
    fmt::format_to(to, "\n{}: out of memory at request {}: {} on stream {:#x}{}\n", o.name, o.out_of_memory->request,
                   format_exact_size(o.out_of_memory->size), o.out_of_memory->stream,
                   o.out_of_memory->phase.empty() ? "" : ", in phase " + o.out_of_memory->phase);
    for (const std::string& frame : o.out_of_memory->stack) fmt::format_to(to, "    {}\n", frame);
  }
  fmt::format_to(to, "\n");
  if (model.recommended) {
    const report::WhatifOutcome& best = model.outcomes[*model.recommended];
    if (*model.recommended == 0)
      fmt::format_to(to, "Recommended: the recorded settings: no scenario fits in less than {}\n",
                     format_size(best.fits_in));
    else
      fmt::format_to(to, "Recommended: {}: fits in {} instead of {}; peak reserved {} instead of {}\n", best.name,
                     format_size(best.fits_in), format_size(recorded.fits_in), format_size(best.peak_reserved),
                     format_size(recorded.peak_reserved));
  } else {
    fmt::format_to(to, "No scenario fits on the device. What dominates: {}\n", model.none_fits_because);
  }
}

}  // namespace gpumemtrace::render
