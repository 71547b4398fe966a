// Phase instances in the replay (docs/reports.md, "Phases"): each push/pop of a thread's phase is an
// instance of its phase path ("step/forward" #3), with the process's device memory when it started and
// ended, the most that was live while it was open, what was allocated in it (nested phases included) and,
// when it ended, what of that was still live, by site.
//
// Cost: nothing for a trace without phases; otherwise one hash entry per live allocation made in a phase,
// and per allocation, work in the number of instances open on its thread (replay::kMaxPhaseDepth at most).
// The peak of an instance comes from the process's running maxima when it ends, not from updating every
// open instance at every allocation.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyzer/replay/accounts.h"
#include "analyzer/replay/phases.h"

namespace gpumemtrace::replay {

inline constexpr uint32_t kNoInstance = UINT32_MAX;

struct SiteBytes {
  SiteId site = 0;
  uint64_t bytes = 0;
  uint64_t count = 0;
};

struct PhaseInstance {
  PathId path = kNoPhase;
  uint32_t thread = 0;
  uint32_t number = 0;               // 1 for the first instance of its path, 2 for the next, ...
  uint32_t parent = kNoInstance;     // the instance it is nested in on its thread
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;               // the end of the trace while open
  bool open = true;                  // never popped
  uint64_t live_at_start = 0;        // the process's device memory
  uint64_t live_at_end = 0;
  uint64_t peak_bytes = 0;           // the most the process had live while the instance was open
  uint64_t peak_ns = 0;
  uint64_t allocated_bytes = 0;      // allocated in it, nested phases included
  uint64_t allocations = 0;
  std::vector<SiteBytes> left_live;  // at its end: allocated in it and still live, by site, most first
  uint64_t left_bytes = 0;
  uint64_t left_count = 0;
};

class PhaseInstances {
 public:
  // `live` is the process's live device memory after the event. Instances are the pushes the phase tracker
  // gave a path; a pop ends the one at `place` among the thread's open instances (outermost 0), the place
  // PhaseTracker::on(PhasePop) returned.
  void on_push(uint32_t thread, PathId path, uint64_t time_ns, uint64_t live);
  void on_pop(uint32_t thread, size_t place, uint64_t time_ns, uint64_t live);
  // `key` names the allocation until its free (its address and address space).
  void on_alloc(uint32_t thread, uint64_t key, SiteId site, uint64_t size, uint64_t time_ns, uint64_t live);
  void on_free(uint64_t key, SiteId site, uint64_t size);
  // The trace ends: instances still open end with it (and stay open()).
  void finish(uint64_t end_ns, uint64_t live);

  const std::vector<PhaseInstance>& instances() const { return instances_; }
  // A path's windows so far: its instances, those that overlap in time (on several threads) as one; and
  // whether one is open now.
  uint32_t windows(PathId path) const { return path < spans_.size() ? spans_[path].windows : 0; }
  bool window_open(PathId path) const { return path < spans_.size() && spans_[path].open > 0; }

 private:
  void close(uint32_t id, uint64_t time_ns, uint64_t live);
  // The process's live memory after an event while some instance was open.
  void level(uint64_t time_ns, uint64_t live);
  // Where an allocation was made: its thread and the innermost instance open there then.
  struct MadeIn {
    uint32_t thread = 0;
    uint32_t innermost = 0;
  };
  // Calls f(instance id) for the instances open when the allocation was made that are still open.
  template <typename F>
  void for_open_chain(const MadeIn& made_in, F f);

  std::vector<PhaseInstance> instances_;
  std::vector<std::vector<uint32_t>> threads_;  // by thread index: its open instances, outermost first
  size_t open_ = 0;                             // open instances on all threads
  // The running maxima of the process's live memory since the oldest open instance began: each level is
  // higher than every later one, so the peak since an event is the first level at or after it.
  struct Level {
    uint64_t sequence = 0;
    uint64_t bytes = 0;
    uint64_t time_ns = 0;
  };
  std::vector<Level> levels_;
  uint64_t sequence_ = 0;
  std::vector<uint64_t> start_sequences_;  // by instance
  std::unordered_map<uint32_t, std::unordered_map<SiteId, SiteBytes>> live_in_;  // open instance → its live
  std::unordered_map<uint64_t, MadeIn> made_in_;  // live allocation made in a phase → where
  std::unordered_map<PathId, uint32_t> counts_;     // instances per path so far
  struct Span {
    uint32_t open = 0;  // instances open now
    uint32_t windows = 0;
  };
  std::vector<Span> spans_;  // by path
};

}  // namespace gpumemtrace::replay
