// The live set at a bounded number of moments of each timeline account, for a viewer that shows what
// was live at any point of the timeline: at most kMaxMoments per account, one per group of timeline
// slices (the first moment the account held the most of its group, so the figure matches the height the
// timeline draws there), each with its kSitesPerMoment largest sites and the rest summed. The size does
// not depend on the number of events. Found by reading the trace a second time (analysis/analysis.h).
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

struct Moment {
  uint64_t time_ns = 0;
  uint64_t start_ns = 0;  // the group of timeline slices it stands for: [start_ns, end_ns)
  uint64_t end_ns = 0;
  uint64_t live_bytes = 0;
  uint64_t live_count = 0;
  std::vector<SiteFigures> sites;  // largest first
  uint64_t other_bytes = 0;        // the sites left out
  uint64_t other_count = 0;
  uint64_t other_sites = 0;
};

struct AccountMoments {
  AccountFigures account;
  std::vector<Moment> moments;  // in time order
};

struct MomentsModel {
  static constexpr uint32_t kMaxMoments = 256;
  static constexpr size_t kSitesPerMoment = 100;
  std::vector<AccountMoments> accounts;  // timeline_accounts(), in that order
};

MomentsModel moments_model(ModelInput& input);

}  // namespace gpumemtrace::report
