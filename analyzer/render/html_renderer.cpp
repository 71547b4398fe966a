// The HTML output: one self-contained page (docs/reports.md, "HTML") that shows the report's JSON with the
// bundled front end of analyzer/html (uPlot timelines, a d3-flame-graph icicle, tables and trees). Its
// stacks are the ones people read first (report::user_stacks), with short function names.
#include <string>

#include "analyzer/render/html_assets.h"
#include "analyzer/render/renderers.h"
#include "analyzer/report/stack_text.h"

namespace gpumemtrace::render {

namespace {

// '<' as \u003c: the same JSON, and nothing in it can end the <script> element it sits in.
void append_script_safe_json(fmt::memory_buffer& out, std::string_view json) {
  for (char c : json) {
    if (c == '<')
      out.append(std::string_view("\\u003c"));
    else
      out.push_back(c);
  }
}

report::Report for_people(const report::Report& report) {
  report::Report shown{report.trace, report::user_stacks(report.stacks), report.body, report.view};
  for (auto& [id, frames] : shown.stacks.frames)
    for (symbolize::Frame& frame : frames)
      if (frame.kind == symbolize::FrameKind::Native && !frame.function.empty())
        frame.function = report::short_function_name(frame.function);
  return shown;
}

}  // namespace

void render_html(const report::Report& report, const RenderOptions& options, fmt::memory_buffer& out) {
  fmt::memory_buffer json;
  render_json(for_people(report), options, json);
  out.append(std::string_view(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>gpumemtrace report</title>\n<style>"));
  out.append(kHtmlStyle);
  out.append(std::string_view("</style>\n</head>\n<body>\n<div id=\"app\">"));
  if (kHtmlScript.empty())
    out.append(std::string_view(
        "<p>This gpumemtrace was built without the page's front end (node and npm were missing): the report's data "
        "is in this file as JSON, in the element gpumemtrace-data.</p>"));
  out.append(std::string_view("</div>\n<script type=\"application/json\" id=\"gpumemtrace-data\">"));
  append_script_safe_json(out, std::string_view(json.data(), json.size()));
  out.append(std::string_view("</script>\n<script>"));
  out.append(kHtmlScript);
  out.append(std::string_view("</script>\n</body>\n</html>\n"));
}

}  // namespace gpumemtrace::render
