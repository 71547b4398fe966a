// The accounts a report lists: each device's totals, and managed and pinned host memory apart.
#pragma once

#include <optional>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

struct AccountsModel {
  bool complete = false;                     // "at exit" rather than "when the trace stops"
  std::vector<AccountFigures> devices;       // the wanted devices, by ordinal
  std::vector<AccountFigures> other_memory;  // managed, then pinned host memory, when used (and no --device)
  AccountFigures managed;                    // always, for the JSON contract
  AccountFigures host_pinned;
  // With both_views, for a trace with heaps: each device of `devices` in the other view (figures.h).
  std::optional<View> other_view;
  std::vector<AccountFigures> other_devices;
};

AccountsModel accounts_model(ModelInput& input, bool both_views = false);

}  // namespace gpumemtrace::report
