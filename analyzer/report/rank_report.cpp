#include "analyzer/report/rank_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace gpumemtrace::report {

namespace {

// The row the focus asks for, and why; nullopt when nothing stands out.
std::optional<std::pair<size_t, RankPick>> focused_row(const RankBalance& balance, RankFocus focus) {
  auto largest = [&]() -> std::optional<std::pair<size_t, RankPick>> {
    if (!balance.largest) return std::nullopt;
    return std::pair{*balance.largest, RankPick::LargestPeak};
  };
  auto failed = [&]() -> std::optional<std::pair<size_t, RankPick>> {
    if (!balance.first_failed) return std::nullopt;
    return std::pair{*balance.first_failed, RankPick::FirstFailed};
  };
  switch (focus) {
    case RankFocus::LargestPeak:
      return largest();
    case RankFocus::FirstFailed:
      return failed();
    case RankFocus::FailedOrLargest:
      return balance.first_failed ? failed() : largest();
    case RankFocus::MostLeaked: {
      std::optional<size_t> most;
      for (size_t i = 0; i < balance.ranks.size(); ++i)
        if (balance.ranks[i].leaked_bytes > (most ? balance.ranks[*most].leaked_bytes : 0)) most = i;
      if (!most) return std::nullopt;
      return std::pair{*most, RankPick::MostLeaked};
    }
  }
  return std::nullopt;
}

// Ranks that allocate on one physical GPU (the same UUID) while they both run, then each rank's own findings.
// Ranks run one after another may use the same GPU; a start that is not known counts as overlapping.
std::vector<std::string> placement_findings(const std::vector<RankTrace>& traces, const std::vector<RankRow>& rows) {
  std::vector<std::string> out;
  std::map<std::string, std::vector<size_t>> ranks_of_gpu;  // UUID → rows, in rank order
  for (size_t i = 0; i < traces.size(); ++i)
    for (const std::string& uuid : traces[i].placement.allocating_uuids()) ranks_of_gpu[uuid].push_back(i);
  auto overlap = [&](size_t a, size_t b) {
    uint64_t start_a = traces[a].profile.start_wall_ns, start_b = traces[b].profile.start_wall_ns;
    if (start_a == 0 || start_b == 0) return true;
    return start_a <= start_b + traces[b].placement.end_ns && start_b <= start_a + traces[a].placement.end_ns;
  };
  for (const auto& [uuid, group] : ranks_of_gpu) {
    std::vector<std::string> sharing;
    for (size_t a : group)
      if (std::ranges::any_of(group, [&](size_t b) { return a != b && overlap(a, b); })) sharing.push_back(rows[a].rank);
    if (sharing.size() < 2) continue;
    std::string list;
    for (size_t i = 0; i < sharing.size(); ++i)
      list += (i == 0 ? "" : i + 1 == sharing.size() ? " and " : ", ") + sharing[i];
    out.push_back(fmt::format("{} allocate on the same GPU {} at the same time: they share its memory", list, uuid));
  }
  for (size_t i = 0; i < traces.size(); ++i)
    for (const std::string& finding : traces[i].placement.findings) out.push_back(rows[i].rank + ": " + finding);
  return out;
}

}  // namespace

std::string_view rank_pick_name(RankPick pick) {
  switch (pick) {
    case RankPick::LargestPeak: return "largest-peak";
    case RankPick::MostLeaked: return "most-leaked";
    case RankPick::FirstFailed: return "first-failed";
    case RankPick::Chosen: return "chosen";
    case RankPick::All: return "all";
  }
  return "?";
}

RankReport rank_report(std::string path, std::vector<RankTrace> traces, std::vector<UnreadableTrace> unreadable,
                       RankFocus focus, const RankChoice& choice, std::optional<int32_t> device) {
  RankReport model;
  model.path = std::move(path);
  model.unreadable = std::move(unreadable);
  model.focus = focus;
  size_t count = traces.size();
  std::erase_if(traces, [&](const RankTrace& trace) {
    if (!left_out_of_set(trace.profile, count)) return false;
    model.left_out.push_back(trace.profile.source);
    return true;
  });
  std::stable_sort(traces.begin(), traces.end(),
                   [](const RankTrace& a, const RankTrace& b) { return rank_order(a.profile, b.profile); });
  std::vector<RunProfile> profiles;
  for (const RankTrace& trace : traces) profiles.push_back(trace.profile);
  model.balance = rank_balance(profiles, device);
  model.placement_findings = placement_findings(traces, model.balance.ranks);
  if (!model.placement_findings.empty()) model.placement_remedy = wrong_gpu_remedy();

  auto show = [&](size_t row, RankPick pick) {
    model.details.push_back({model.balance.ranks[row].rank, pick, std::move(traces[row].report)});
  };
  if (choice.all || choice.rank) {
    for (size_t i = 0; i < traces.size(); ++i)
      if (choice.all || traces[i].profile.rank == choice.rank) show(i, choice.all ? RankPick::All : RankPick::Chosen);
  } else if (auto row = focused_row(model.balance, focus)) {
    show(row->first, row->second);
  }
  return model;
}

}  // namespace gpumemtrace::report
