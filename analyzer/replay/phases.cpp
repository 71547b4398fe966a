#include "analyzer/replay/phases.h"

#include <algorithm>

#include "common/shortened_text.h"

namespace gpumemtrace::replay {

PhaseTracker::PhaseTracker() : nodes_(1) {}

void PhaseTracker::on(const trace::PhaseDomain& domain) { domains_[domain.index] = std::string(domain.name); }

void PhaseTracker::on(const trace::PhaseName& name) {
  names_[name.index] = Name{name.domain, std::string(name.name)};
}

PathId PhaseTracker::child(PathId parent, uint64_t name) {
  auto [it, added] = children_.try_emplace({parent, name}, static_cast<PathId>(nodes_.size()));
  if (added) nodes_.push_back(Node{parent, name});
  return it->second;
}

PhaseTracker::Thread& PhaseTracker::thread(uint32_t index) {
  if (index >= threads_.size()) threads_.resize(index + 1);
  return threads_[index];
}

bool PhaseTracker::on(const trace::PhasePush& push) {
  seen_ = true;
  Thread& t = thread(push.thread);
  uint32_t slot;
  if (t.free_slots.empty()) {
    slot = static_cast<uint32_t>(t.slots.size());
    t.slots.emplace_back();
  } else {
    slot = t.free_slots.back();
    t.free_slots.pop_back();
  }
  Open& open = t.slots[slot];
  open.name = push.name;
  open.domain = domain_of(push.name);
  open.outer = t.innermost;
  open.inner = kNone;
  if (t.innermost != kNone) t.slots[t.innermost].inner = slot;
  t.innermost = slot;
  auto [in_domain, first] = t.innermost_in_domain.try_emplace(open.domain, slot);
  open.outer_in_domain = first ? kNone : in_domain->second;
  in_domain->second = slot;
  open.has_path = t.with_path.size() < kMaxPhaseDepth;
  if (!open.has_path) {
    ++too_deep_;
    return false;
  }
  PathId outer = t.with_path.empty() ? kNoPhase : t.with_path.back().path;
  t.with_path.push_back(WithPath{slot, child(outer, push.name)});
  return true;
}

std::optional<size_t> PhaseTracker::on(const trace::PhasePop& pop) {
  Thread& t = thread(pop.thread);
  auto in_domain = t.innermost_in_domain.find(pop.domain);
  if (in_domain == t.innermost_in_domain.end() || in_domain->second == kNone) {
    ++unmatched_;
    return std::nullopt;
  }
  uint32_t slot = in_domain->second;
  Open& open = t.slots[slot];
  in_domain->second = open.outer_in_domain;
  if (open.outer != kNone) t.slots[open.outer].inner = open.inner;
  if (open.inner != kNone) t.slots[open.inner].outer = open.outer;
  if (t.innermost == slot) t.innermost = open.outer;
  t.free_slots.push_back(slot);
  if (!open.has_path) return std::nullopt;
  // Phases of other domains pushed after it stay open, on the path they have without it.
  auto it = std::find_if(t.with_path.begin(), t.with_path.end(), [slot](const WithPath& w) { return w.slot == slot; });
  size_t place = static_cast<size_t>(it - t.with_path.begin());
  t.with_path.erase(it);
  for (size_t j = place; j < t.with_path.size(); ++j)
    t.with_path[j].path = child(j == 0 ? kNoPhase : t.with_path[j - 1].path, t.slots[t.with_path[j].slot].name);
  return place;
}

void PhaseTracker::on(const trace::RangeStart& start) {
  seen_ = true;
  open_ranges_[start.id] = start.name;
}

void PhaseTracker::on(const trace::RangeEnd& end) {
  if (open_ranges_.erase(end.id) == 0) ++unmatched_;
}

std::vector<PhaseTracker::NeverPopped> PhaseTracker::never_popped() const {
  std::vector<NeverPopped> out;
  for (uint32_t index = 0; index < threads_.size(); ++index) {
    std::map<uint64_t, uint64_t> counts;  // name → open pushes
    for (uint32_t slot = threads_[index].innermost; slot != kNone; slot = threads_[index].slots[slot].outer)
      ++counts[threads_[index].slots[slot].name];
    for (const auto& [name, count] : counts) out.push_back({index, name, count});
  }
  std::stable_sort(out.begin(), out.end(), [](const NeverPopped& a, const NeverPopped& b) { return a.count > b.count; });
  return out;
}

std::string PhaseTracker::name_text(uint64_t name) const {
  auto it = names_.find(name);
  if (it == names_.end()) return "phase#" + std::to_string(name);
  std::string text = shortened_text(it->second.text, kMaxPhaseNameText);
  if (it->second.domain == 0) return text;
  auto domain = domains_.find(it->second.domain);
  return (domain == domains_.end() ? "domain#" + std::to_string(it->second.domain)
                                   : shortened_text(domain->second, kMaxPhaseNameText)) +
         "::" + text;
}

std::string PhaseTracker::path_text(PathId path) const {
  std::vector<uint64_t> names;  // innermost first; kMaxPhaseDepth at most
  for (; path != kNoPhase; path = nodes_[path].parent) names.push_back(nodes_[path].name);
  std::string text;
  for (size_t i = names.size(); i > 0;) {
    size_t run = 1;
    while (i - run > 0 && names[i - run - 1] == names[i - 1]) ++run;
    if (!text.empty()) text += '/';
    text += name_text(names[i - 1]);
    if (run > 1) text += " ×" + std::to_string(run);
    i -= run;
  }
  return shortened_text(text, kMaxPhasePathText);
}

}  // namespace gpumemtrace::replay
