#include "analyzer/report/profile_diff.h"

#include <algorithm>
#include <map>
#include <set>

namespace gpumemtrace::report {

std::vector<StackChange> stack_changes(const DeviceProfile* before, const DeviceProfile* after) {
  std::map<std::string, StackChange> by_stack;
  if (before)
    for (const StackBytes& stack : before->stacks_at_peak) by_stack[stack.stack].before_bytes = stack.bytes;
  if (after)
    for (const StackBytes& stack : after->stacks_at_peak) by_stack[stack.stack].after_bytes = stack.bytes;
  std::vector<StackChange> changes;
  for (auto& [signature, change] : by_stack) {
    if (change.delta() == 0) continue;
    change.stack = signature;
    changes.push_back(std::move(change));
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const StackChange& a, const StackChange& b) { return a.delta() > b.delta(); });
  return changes;
}

std::vector<RankPair> match_ranks(std::span<const RunProfile> before, std::span<const RunProfile> after) {
  std::vector<RankPair> pairs;
  if (before.size() == 1 && after.size() == 1) {
    std::vector<std::string> labels = rank_labels(after);
    return {{labels[0], 0, 0}};
  }
  std::vector<std::string> before_labels = rank_labels(before), after_labels = rank_labels(after);
  std::map<std::string, size_t> after_index;
  for (size_t i = 0; i < after.size(); ++i) after_index[after_labels[i]] = i;
  std::set<size_t> matched;
  for (size_t i = 0; i < before.size(); ++i) {
    auto found = after_index.find(before_labels[i]);
    size_t other = found == after_index.end() ? SIZE_MAX : found->second;
    if (other != SIZE_MAX) matched.insert(other);
    pairs.push_back({before_labels[i], i, other});
  }
  for (size_t i = 0; i < after.size(); ++i)
    if (!matched.contains(i)) pairs.push_back({after_labels[i], SIZE_MAX, i});
  return pairs;
}

ProfileDiff diff_profiles(std::span<const RunProfile> before, std::span<const RunProfile> after, size_t top) {
  ProfileDiff diff;
  for (const RankPair& pair : match_ranks(before, after)) {
    if (pair.after == SIZE_MAX) {
      diff.only_before.push_back(pair.rank);
      continue;
    }
    if (pair.before == SIZE_MAX) {
      diff.only_after.push_back(pair.rank);
      continue;
    }
    const RunProfile& a = before[pair.before];
    const RunProfile& b = after[pair.after];
    std::set<int32_t> devices;
    for (const DeviceProfile& device : a.devices) devices.insert(device.device);
    for (const DeviceProfile& device : b.devices) devices.insert(device.device);
    for (int32_t ordinal : devices) {
      const DeviceProfile* old_device = find_device(a, ordinal);
      const DeviceProfile* new_device = find_device(b, ordinal);
      DeviceChange& change = diff.devices.emplace_back();
      change.rank = pair.rank;
      change.device = ordinal;
      change.in_before = old_device != nullptr;
      change.in_after = new_device != nullptr;
      DeviceProfile none;
      const DeviceProfile& x = old_device ? *old_device : none;
      const DeviceProfile& y = new_device ? *new_device : none;
      change.peak = {x.peak_bytes, y.peak_bytes};
      change.leaked = {x.leaked_bytes, y.leaked_bytes};
      change.final_bytes = {x.final_bytes, y.final_bytes};
      std::vector<StackChange> changes = stack_changes(old_device, new_device);
      for (const StackChange& stack : changes)
        if (stack.delta() > 0 && change.grew.size() < top) change.grew.push_back(stack);
      for (auto it = changes.rbegin(); it != changes.rend(); ++it)
        if (it->delta() < 0 && change.shrank.size() < top) change.shrank.push_back(*it);
    }
  }
  return diff;
}

}  // namespace gpumemtrace::report
