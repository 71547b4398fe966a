// A directory of traces as JSON (docs/reports.md, "Many traces at once"): the per-rank table and the
// reports shown, each as its command's --json gives it.
#include "analyzer/render/json_rank_balance.h"
#include "analyzer/render/rank_output.h"
#include "analyzer/render/renderers.h"

namespace gpumemtrace::render {

void json_rank_report(const report::RankReport& model, const RenderOptions& options, fmt::memory_buffer& out) {
  {
    JsonObject json(out);
    json.string("directory", model.path);
    write_rank_balance(json, model.balance);
    json.begin_array("placement_findings");
    for (const std::string& finding : model.placement_findings) json.string({}, finding);
    json.end_array();
    json.string("placement_remedy", model.placement_remedy);
    json.begin_array("left_out");
    for (const std::string& trace : model.left_out) json.string({}, trace);
    json.end_array();
    json.begin_array("unreadable");
    for (const report::UnreadableTrace& trace : model.unreadable) {
      json.begin_object();
      json.string("trace", trace.path);
      json.string("error", trace.error);
      json.end_object();
    }
    json.end_array();
    json.begin_array("reports");
    for (const report::RankDetail& detail : model.details) {
      json.begin_object();
      write_rank_label(json, "rank", detail.rank);
      json.string("picked", report::rank_pick_name(detail.pick));
      fmt::memory_buffer report;
      render_json(detail.report, options, report);
      std::string_view text(report.data(), report.size());
      while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
      json.raw("report", text);
      json.end_object();
    }
    json.end_array();
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
