// Phases in the replay: each thread's open pushed phases (NVTX push/pop ranges), the process-wide ranges
// (start/end) and the phase paths allocations are made in. docs/reports.md, "Phases".
//
// A phase path names where a thread is: its pushed phases, outermost first ("step/forward/attention"). Paths
// are interned in a trie; path 0 is "in no phase". Start/end ranges are not part of any path: they belong to
// the process, not to a thread. Records that do not add up (a pop with nothing pushed, the end of a range
// that is not open, a name never defined) are counted and otherwise ignored.
//
// A pop leaves the thread's innermost open phase of its domain; phases of other domains pushed after it stay
// open, on the path they have without it. Only the first kMaxPhaseDepth open phases of a thread have paths
// (and instances): a push deeper than that, nearly always a loop whose pop is skipped, is counted in
// too_deep() and belongs to the path of the phase at that depth. So a push or pop costs O(kMaxPhaseDepth)
// at most, however the records nest.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trace/reader/reader.h"

namespace gpumemtrace::replay {

using PathId = uint32_t;
inline constexpr PathId kNoPhase = 0;
inline constexpr size_t kMaxPhaseDepth = 64;
// Reports show at most this much of a phase name and of a phase path; longer ones are cut in the middle.
inline constexpr size_t kMaxPhaseNameText = 200;
inline constexpr size_t kMaxPhasePathText = 600;

class PhaseTracker {
 public:
  PhaseTracker();

  void on(const trace::PhaseDomain& domain);
  void on(const trace::PhaseName& name);
  // True when the push has a path of its own (it is among the thread's first kMaxPhaseDepth open phases).
  bool on(const trace::PhasePush& push);
  // The place, among the thread's phases that have paths (outermost 0), of the phase the pop left; nullopt
  // when it left one deeper than kMaxPhaseDepth, or none was open (counted in unmatched()).
  std::optional<size_t> on(const trace::PhasePop& pop);
  void on(const trace::RangeStart& start);
  void on(const trace::RangeEnd& end);

  // The thread's current path (threads are the reader's indexes, from 1).
  PathId path_of_thread(uint32_t thread) const {
    return thread < threads_.size() && !threads_[thread].with_path.empty() ? threads_[thread].with_path.back().path
                                                                            : kNoPhase;
  }
  PathId parent(PathId path) const { return nodes_[path].parent; }
  uint64_t name_of(PathId path) const { return nodes_[path].name; }
  size_t path_count() const { return nodes_.size(); }
  // "step/forward"; "" for kNoPhase. A name repeated in itself is shown once with its count
  // ("train_step ×3/forward"); at most kMaxPhasePathText bytes.
  std::string path_text(PathId path) const;
  // A phase name as reports show it: "name", or "domain::name" outside the default domain; at most
  // kMaxPhaseNameText bytes of the name.
  std::string name_text(uint64_t name) const;
  // The domain of a phase name (0, the default, for a name never defined).
  uint64_t domain_of(uint64_t name) const {
    auto it = names_.find(name);
    return it == names_.end() ? 0 : it->second.domain;
  }
  bool seen() const { return seen_; }
  uint64_t unmatched() const { return unmatched_; }
  uint64_t too_deep() const { return too_deep_; }

  // Phases still open: per thread and name, how many pushes of it were never popped.
  struct NeverPopped {
    uint32_t thread = 0;
    uint64_t name = 0;
    uint64_t count = 0;
  };
  std::vector<NeverPopped> never_popped() const;

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    PathId parent = kNoPhase;
    uint64_t name = 0;
  };
  // An open phase of a thread, in its list of open phases.
  struct Open {
    uint64_t name = 0;
    uint64_t domain = 0;
    uint32_t outer = kNone;            // the next open phase further out, of any domain
    uint32_t inner = kNone;
    uint32_t outer_in_domain = kNone;  // the next open phase further out in the same domain
    bool has_path = false;
  };
  struct WithPath {
    uint32_t slot = 0;
    PathId path = kNoPhase;
  };
  struct Thread {
    std::vector<Open> slots;            // the open phases (and freed slots, reused)
    std::vector<uint32_t> free_slots;
    uint32_t innermost = kNone;
    std::unordered_map<uint64_t, uint32_t> innermost_in_domain;
    std::vector<WithPath> with_path;    // the open phases with paths, outermost first: kMaxPhaseDepth at most
  };
  PathId child(PathId parent, uint64_t name);
  Thread& thread(uint32_t index);

  std::vector<Node> nodes_;
  std::map<std::pair<PathId, uint64_t>, PathId> children_;
  std::vector<Thread> threads_;  // by thread index
  std::unordered_map<uint64_t, std::string> domains_;
  struct Name {
    uint64_t domain = 0;
    std::string text;
  };
  std::unordered_map<uint64_t, Name> names_;
  std::unordered_map<uint64_t, uint64_t> open_ranges_;  // id → name
  bool seen_ = false;
  uint64_t unmatched_ = 0;
  uint64_t too_deep_ = 0;
};

}  // namespace gpumemtrace::replay
