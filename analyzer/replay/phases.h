// Phases in the replay: each thread's stack of pushed phases (NVTX push/pop ranges), the process-wide
// ranges (start/end) and the phase paths allocations are made in. docs/reports.md, "Phases".
//
// A phase path names where a thread is: its pushed phases, outermost first ("step/forward/attention"). Paths
// are interned in a trie; path 0 is "in no phase". Start/end ranges are not part of any path: they belong to
// the process, not to a thread. Records that do not add up (a pop with nothing pushed, the end of a range
// that is not open, a name never defined) are counted and otherwise ignored.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trace/reader/reader.h"

namespace gpumemtrace::replay {

using PathId = uint32_t;
inline constexpr PathId kNoPhase = 0;

class PhaseTracker {
 public:
  PhaseTracker();

  void on(const trace::PhaseDomain& domain);
  void on(const trace::PhaseName& name);
  void on(const trace::PhasePush& push);
  // Leaves the thread's innermost phase of the domain; a pop with none open is counted in unmatched().
  void on(const trace::PhasePop& pop);
  void on(const trace::RangeStart& start);
  void on(const trace::RangeEnd& end);

  // The thread's current path (threads are the reader's indexes, from 1).
  PathId path_of_thread(uint32_t thread) const {
    return thread < threads_.size() && !threads_[thread].empty() ? threads_[thread].back().path : kNoPhase;
  }
  PathId parent(PathId path) const { return nodes_[path].parent; }
  uint64_t name_of(PathId path) const { return nodes_[path].name; }
  size_t path_count() const { return nodes_.size(); }
  // "step/forward"; "" for kNoPhase.
  std::string path_text(PathId path) const;
  // A phase name as reports show it: "name", or "domain::name" outside the default domain.
  std::string name_text(uint64_t name) const;
  // The domain of a phase name (0, the default, for a name never defined).
  uint64_t domain_of(uint64_t name) const {
    auto it = names_.find(name);
    return it == names_.end() ? 0 : it->second.domain;
  }
  bool seen() const { return seen_; }
  uint64_t unmatched() const { return unmatched_; }

 private:
  struct Node {
    PathId parent = kNoPhase;
    uint64_t name = 0;
  };
  struct Open {
    uint64_t name = 0;
    uint64_t domain = 0;
    PathId path = kNoPhase;
  };
  struct Name {
    uint64_t domain = 0;
    std::string text;
  };
  PathId child(PathId parent, uint64_t name);
  std::vector<Open>& thread(uint32_t index);

  std::vector<Node> nodes_;
  std::map<std::pair<PathId, uint64_t>, PathId> children_;
  std::vector<std::vector<Open>> threads_;  // by thread index
  std::unordered_map<uint64_t, std::string> domains_;
  std::unordered_map<uint64_t, Name> names_;
  std::unordered_map<uint64_t, uint64_t> open_ranges_;  // id → name
  bool seen_ = false;
  uint64_t unmatched_ = 0;
};

}  // namespace gpumemtrace::replay
