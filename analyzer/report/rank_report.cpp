#include "analyzer/report/rank_report.h"

#include <algorithm>

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
