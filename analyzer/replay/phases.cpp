#include "analyzer/replay/phases.h"

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

std::vector<PhaseTracker::Open>& PhaseTracker::thread(uint32_t index) {
  if (index >= threads_.size()) threads_.resize(index + 1);
  return threads_[index];
}

void PhaseTracker::on(const trace::PhasePush& push) {
  seen_ = true;
  std::vector<Open>& open = thread(push.thread);
  PathId outer = open.empty() ? kNoPhase : open.back().path;
  auto name = names_.find(push.name);
  uint64_t domain = name == names_.end() ? 0 : name->second.domain;
  open.push_back(Open{push.name, domain, child(outer, push.name)});
}

void PhaseTracker::on(const trace::PhasePop& pop) {
  std::vector<Open>& open = thread(pop.thread);
  // The innermost phase of the domain; phases of other domains pushed after it stay open, on a new path.
  size_t i = open.size();
  while (i > 0 && open[i - 1].domain != pop.domain) --i;
  if (i == 0) {
    ++unmatched_;
    return;
  }
  open.erase(open.begin() + static_cast<std::ptrdiff_t>(i - 1));
  for (size_t j = i - 1; j < open.size(); ++j) open[j].path = child(j == 0 ? kNoPhase : open[j - 1].path, open[j].name);
}

void PhaseTracker::on(const trace::RangeStart& start) {
  seen_ = true;
  open_ranges_[start.id] = start.name;
}

void PhaseTracker::on(const trace::RangeEnd& end) {
  if (open_ranges_.erase(end.id) == 0) ++unmatched_;
}

std::string PhaseTracker::name_text(uint64_t name) const {
  auto it = names_.find(name);
  if (it == names_.end()) return "phase#" + std::to_string(name);
  if (it->second.domain == 0) return it->second.text;
  auto domain = domains_.find(it->second.domain);
  return (domain == domains_.end() ? "domain#" + std::to_string(it->second.domain) : domain->second) +
         "::" + it->second.text;
}

std::string PhaseTracker::path_text(PathId path) const {
  std::string text;
  for (; path != kNoPhase; path = nodes_[path].parent) text = name_text(nodes_[path].name) + (text.empty() ? "" : "/") + text;
  return text;
}

}  // namespace gpumemtrace::replay
