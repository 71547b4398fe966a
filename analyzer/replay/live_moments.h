// The live set of accounts at chosen moments, seen in a second reading of the trace (the first gave the
// timeline): for each group of timeline slices, the first moment the account held the most the timeline
// says it held in that group. So a page can show, for any point of a drawn timeline, what was live at the
// height drawn there. The cost is bounded by the number of moments, not of events: a moment copies the
// sites of its account once.
//
//   LiveMoments moments(plan);
//   while (const trace::Record* record = reader.next()) {
//     moments.before(replay, reader.time_ns());
//     replay.on_record(*record, reader);
//     moments.after(replay, reader.time_ns());
//   }
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/replay/replay.h"

namespace gpumemtrace::replay {

// Where to look: the moments of each account are in slices [origin + i * width, origin + (i+1) * width).
struct MomentsPlan {
  uint64_t origin_ns = 0;
  uint64_t width_ns = 1;
  struct Wanted {
    AccountId account = 0;
    std::vector<uint64_t> slice_max;  // the most the account held in each slice (from the timeline)
  };
  std::vector<Wanted> accounts;
  size_t sites_per_moment = 100;  // the largest sites kept; the rest is summed up
};

struct LiveMoment {
  uint32_t slice = 0;
  uint64_t time_ns = 0;  // the first time in the slice that the account held live_bytes
  uint64_t live_bytes = 0;
  uint64_t live_count = 0;
  std::vector<SiteShare> sites;  // largest first, at most MomentsPlan::sites_per_moment
  uint64_t other_bytes = 0;      // the sites left out
  uint64_t other_count = 0;
  uint64_t other_sites = 0;
};

class LiveMoments {
 public:
  explicit LiveMoments(MomentsPlan plan);

  // Around each record, with the reader's time after decoding it.
  void before(const Replay& replay, uint64_t time_ns);
  void after(const Replay& replay, uint64_t time_ns);

  // Per account of the plan, in its order: the moments found, by slice.
  const std::vector<std::vector<LiveMoment>>& moments() const { return moments_; }

 private:
  void look(const Replay& replay, uint32_t slice, uint64_t time_ns);
  LiveMoment capture(const Replay& replay, AccountId account, uint32_t slice, uint64_t time_ns) const;

  MomentsPlan plan_;
  std::vector<std::vector<LiveMoment>> moments_;
  std::vector<uint32_t> next_slice_;  // per account: the first slice without a moment yet
  uint32_t slice_ = 0;                // the slice of the last record seen
  bool seen_ = false;
};

}  // namespace gpumemtrace::replay
