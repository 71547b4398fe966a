#include "analyzer/render/json_sections.h"

namespace gpumemtrace::render {

void write_timeline(JsonWriter& json, const report::TimelineModel& timeline) {
  json.number("start_ns", timeline.start_ns);
  json.number("window_ns", timeline.window_ns);
  json.begin_array("series");
  for (const report::TimelineSeries& series : timeline.series) {
    json.begin_object();
    write_device(json, "device", series.account.device);
    json.string("memory", report::memory_name(series.account.memory));
    json.number("peak_bytes", series.account.peak_bytes);
    json.begin_array("max_bytes");
    for (uint64_t value : series.max_bytes) json.number({}, value);
    json.end_array();
    json.end_object();
  }
  json.end_array();
}

}  // namespace gpumemtrace::render
