#include "analyzer/render/json_writer.h"
#include "analyzer/render/whatif_renderers.h"

namespace gpumemtrace::render {

void render_whatif_json(const report::WhatifModel& model, fmt::memory_buffer& out) {
  {
    JsonObject json(out);
    json.string("trace", model.path);
    json.number("device", static_cast<int64_t>(model.device));
    json.string("alloc_conf", model.alloc_conf);
    if (model.memory_fraction)
      json.real("memory_fraction", *model.memory_fraction);
    else
      json.null("memory_fraction");
    json.optional_number("device_memory_bytes", model.device_memory ? std::optional(model.device_memory) : std::nullopt);
    json.optional_string("device_memory_from", model.device_memory_from);
    json.begin_object("replay_of_recorded");
    json.number("requests", model.requests);
    json.number("recorded_segment_events", model.recorded_segment_events);
    json.number("matched_segment_events", model.matched_segment_events);
    json.optional_string("first_difference", model.first_difference);
    json.number("recorded_peak_reserved_bytes", model.recorded_peak_reserved);
    json.number("replayed_peak_reserved_bytes", model.outcomes.at(0).peak_reserved);
    json.number("empty_caches_inferred", model.empty_caches);
    json.boolean("initial_state_empty", model.initial_state_empty);
    json.end_object();
    json.begin_array("scenarios");
    for (const report::WhatifOutcome& o : model.outcomes) {
      json.begin_object();
      json.string("name", o.name);
      json.boolean("other_device", o.other_device);
      json.number("peak_reserved_bytes", o.peak_reserved);
      json.number("peak_allocated_bytes", o.peak_allocated);
      json.number("peak_fragmentation_bytes", o.peak_fragmentation);
      json.number("largest_free_block_at_worst_bytes", o.largest_free_at_worst);
      json.number("cuda_malloc_calls", o.device_allocs);
      json.boolean("out_of_memory", o.out_of_memory.has_value());
      if (o.out_of_memory) {
        json.begin_object("first_out_of_memory");
        json.number("request", o.out_of_memory->request);
        json.number("size_bytes", o.out_of_memory->size);
        json.number("stream", o.out_of_memory->stream);
        json.optional_number("time_ns", o.out_of_memory->time_ns);
        json.optional_string("phase", o.out_of_memory->phase);
        json.begin_array("stack");
        for (const std::string& frame : o.out_of_memory->stack) json.string({}, frame);
        json.end_array();
        json.end_object();
      }
      json.optional_number("fits_in_bytes", o.fits_in ? std::optional(o.fits_in) : std::nullopt);
      json.end_object();
    }
    json.end_array();
    json.optional_string("recommended",
                         model.recommended ? std::string_view(model.outcomes[*model.recommended].name) : "");
    json.optional_string("none_fits_because", model.none_fits_because);
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
