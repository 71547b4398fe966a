#include <cmath>

#include "analyzer/render/fit_renderers.h"
#include "analyzer/render/json_writer.h"

namespace gpumemtrace::render {

namespace {

void bytes(JsonWriter& json, std::string_view key, double value) {
  json.number(key, static_cast<int64_t>(std::llround(value)));
}

void write_group(JsonWriter& json, const report::FitGroup& group) {
  json.begin_object();
  json.optional_string("rank", group.rank);
  json.number("device", static_cast<int64_t>(group.device));
  json.number("memory_bytes", group.memory);
  json.string("memory_from", group.memory_from);
  bytes(json, "constant_bytes", group.constant_bytes);
  bytes(json, "per_sample_bytes", group.per_sample_bytes);
  json.begin_array("peak_bytes");
  for (uint64_t peak : group.peaks) json.number({}, peak);
  json.end_array();
  json.number("largest_error_bytes", group.largest_error);
  json.begin_array("stacks");
  for (const report::StackFit& stack : group.stacks) {
    json.begin_object();
    json.string("stack", stack.stack);
    json.string("kind", stack.proportional ? "per_sample" : "constant");
    bytes(json, "constant_bytes", stack.constant_bytes);
    bytes(json, "per_sample_bytes", stack.per_sample_bytes);
    json.begin_array("measured_bytes");
    for (uint64_t value : stack.measured) json.number({}, value);
    json.end_array();
    json.end_object();
  }
  json.end_array();
  json.boolean("unbounded", group.unbounded);
  json.optional_number("raw_largest_batch", group.raw_batch);
  json.optional_number("raw_bytes_at_largest_batch", group.raw_batch ? std::optional(group.raw_bytes_at_batch) : std::nullopt);
  if (const std::optional<report::AllocatorCheck>& check = group.allocator) {
    json.begin_object("allocator");
    json.number("requests", check->requests);
    json.number("proportional_requests", check->proportional_requests);
    json.optional_number("largest_batch", check->largest_batch);
    json.number("peak_reserved_bytes", check->peak_reserved);
    json.number("next_failed_request", check->next_failed_request);
    json.number("next_failed_size_bytes", check->next_failed_size);
    json.end_object();
  } else {
    json.null("allocator");
  }
  json.optional_string("allocator_skipped", group.allocator_skipped);
  json.optional_number("largest_batch", group.largest_batch());
  json.end_object();
}

}  // namespace

void render_fit_json(const report::BatchFit& model, fmt::memory_buffer& out) {
  {
    JsonObject json(out);
    json.string("program", model.program);
    json.begin_array("runs");
    for (const report::FitRunSummary& run : model.runs) {
      json.begin_object();
      json.string("path", run.path);
      json.number("batch", run.batch);
      json.string("batch_from", run.batch_from);
      json.end_object();
    }
    json.end_array();
    json.number("margin_bytes", model.margin);
    json.begin_array("devices");
    for (const report::FitGroup& group : model.groups) write_group(json, group);
    json.end_array();
    json.boolean("unbounded", model.unbounded);
    json.optional_number("largest_batch", model.largest_batch);
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
