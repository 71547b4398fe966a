// "moments": the live sets at moments of the timeline (report/moments_model.h). Each moment names its
// stacks by id, and "moment_stacks" has each stack once: 256 moments of 100 sites would otherwise repeat
// the same frames thousands of times.
#include <set>

#include "analyzer/render/json_sections.h"

namespace gpumemtrace::render {

void write_moments(JsonWriter& json, const report::MomentsModel& moments, const report::Stacks& stacks) {
  std::set<replay::StackId> used;
  json.begin_object("moments");
  json.number("max_moments", uint64_t{report::MomentsModel::kMaxMoments});
  json.number("sites_per_moment", uint64_t{report::MomentsModel::kSitesPerMoment});
  json.begin_array("accounts");
  for (const report::AccountMoments& account : moments.accounts) {
    json.begin_object();
    write_device(json, "device", account.account.device);
    json.string("memory", report::memory_name(account.account.memory));
    json.begin_array("moments");
    for (const report::Moment& moment : account.moments) {
      json.begin_object();
      json.number("time_ns", moment.time_ns);
      json.number("start_ns", moment.start_ns);
      json.number("end_ns", moment.end_ns);
      json.number("live_bytes", moment.live_bytes);
      json.number("allocations", moment.live_count);
      json.begin_array("sites");
      for (const report::SiteFigures& site : moment.sites) {
        json.begin_object();
        json.number("bytes", site.bytes);
        json.number("allocations", site.count);
        json.number("stack", uint64_t{site.stack});
        json.end_object();
        used.insert(site.stack);
      }
      json.end_array();
      json.number("other_bytes", moment.other_bytes);
      json.number("other_allocations", moment.other_count);
      json.number("other_stacks", moment.other_sites);
      json.end_object();
    }
    json.end_array();
    json.end_object();
  }
  json.end_array();
  json.begin_object("stacks");
  for (replay::StackId id : used) write_stack(json, std::to_string(id), stacks[id]);
  json.end_object();
  json.end_object();
}

}  // namespace gpumemtrace::render
