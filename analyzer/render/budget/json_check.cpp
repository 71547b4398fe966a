#include "analyzer/render/budget/budget_output.h"
#include "analyzer/render/json_rank_balance.h"
#include "analyzer/render/json_writer.h"

namespace gpumemtrace::render {

namespace {

void write_stack_changes(JsonWriter& json, std::string_view key, const std::vector<report::StackChange>& changes) {
  json.begin_array(key);
  for (const report::StackChange& change : changes) {
    json.begin_object();
    json.string("stack", change.stack);
    json.number("before_bytes", change.before_bytes);
    json.number("after_bytes", change.after_bytes);
    json.number("delta_bytes", static_cast<int64_t>(change.delta()));
    json.end_object();
  }
  json.end_array();
}

}  // namespace

void json_check(const report::CheckModel& model, fmt::memory_buffer& out) {
  {
    JsonObject json(out);
    json.boolean("passed", model.passed());
    json.number("traces", uint64_t{model.traces});
    json.number("failures", uint64_t{model.failures()});
    json.begin_array("checks");
    for (const report::CheckResult& result : model.results) {
      json.begin_object();
      json.string("check", report::check_name(result.kind));
      write_rank_label(json, "rank", result.rank);
      if (result.device) json.number("device", int64_t{*result.device});
      else json.null("device");
      json.boolean("passed", result.passed);
      json.number("limit", result.limit);
      bool forecast = result.kind == report::CheckKind::MaxForecastSteps;
      if (forecast && !result.forecast_oom_step) json.null("measured");
      else json.number("measured", result.measured);
      json.optional_number("baseline", result.baseline);
      json.string("message", check_message(result));
      json.optional_string("trace", result.source);
      write_stack_changes(json, "stacks", result.stacks);
      json.end_object();
    }
    json.end_array();
    write_rank_balance(json, model.balance);
  }
  out.push_back('\n');
}

void json_diff(const report::ProfileDiff& diff, fmt::memory_buffer& out) {
  {
    JsonObject json(out);
    json.begin_array("devices");
    for (const report::DeviceChange& change : diff.devices) {
      json.begin_object();
      write_rank_label(json, "rank", change.rank);
      json.number("device", int64_t{change.device});
      json.boolean("in_a", change.in_before);
      json.boolean("in_b", change.in_after);
      for (auto [key, figure] : {std::pair{"peak", &change.peak}, std::pair{"leaked", &change.leaked},
                                 std::pair{"final", &change.final_bytes}}) {
        json.begin_object(key);
        json.number("a_bytes", figure->before);
        json.number("b_bytes", figure->after);
        json.number("delta_bytes", static_cast<int64_t>(figure->delta()));
        json.end_object();
      }
      write_stack_changes(json, "grew", change.grew);
      write_stack_changes(json, "shrank", change.shrank);
      json.end_object();
    }
    json.end_array();
    std::vector<std::string_view> only_a(diff.only_before.begin(), diff.only_before.end());
    std::vector<std::string_view> only_b(diff.only_after.begin(), diff.only_after.end());
    json.strings("only_in_a", only_a);
    json.strings("only_in_b", only_b);
  }
  out.push_back('\n');
}

}  // namespace gpumemtrace::render
