#include "analyzer/render/json_writer.h"
#include "analyzer/render/whatif_renderers.h"

namespace gpumemtrace::render {

void render_whatif_json(const report::WhatifModel& model, fmt::memory_buffer& out) {
  {
    JsonObject json(out);
    json.string("trace", model.path);
    json.string("alloc_conf", model.alloc_conf);
    if (model.memory_fraction)
      json.real("memory_fraction", *model.memory_fraction);
    else
      json.null("memory_fraction");
    json.begin_array("devices");
    for (const report::WhatifDevice& d : model.devices) {
      json.begin_object();
      if (d.device == trace::kNoDevice)
        json.null("device");
      else
        json.number("device", static_cast<int64_t>(d.device));
      json.string("input", d.input == report::WhatifInput::HeapBlocks ? "heap-blocks" : "pytorch-history");
      json.string("input_text", d.input_text);
      json.optional_number("device_memory_bytes", d.device_memory ? std::optional(d.device_memory) : std::nullopt);
      json.optional_string("device_memory_from", d.device_memory_from);
      json.begin_object("replay_of_recorded");
      json.number("requests", d.requests);
      json.number("recorded_segment_events", d.recorded_segment_events);
      json.number("matched_segment_events", d.matched_segment_events);
      json.optional_string("first_difference", d.first_difference);
      json.optional_number("recorded_peak_reserved_bytes", d.recorded_peak_reserved);
      json.optional_string("segments_not_compared", d.not_compared);
      json.number("replayed_peak_reserved_bytes", d.outcomes.at(0).peak_reserved);
      json.number("empty_caches_inferred", d.empty_caches);
      json.boolean("initial_state_empty", d.initial_state_empty);
      json.end_object();
      json.begin_array("scenarios");
      for (const report::WhatifOutcome& o : d.outcomes) {
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
                           d.recommended ? std::string_view(d.outcomes[*d.recommended].name) : "");
      json.optional_string("none_fits_because", d.none_fits_because);
      json.end_object();
    }
    json.end_array();
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
