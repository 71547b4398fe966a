// Memory by phase (docs/reports.md, "Phases"): for each phase path, each of its instances (one push/pop
// of a thread: replay/phase_instances.h) with the peak while it was open, what was allocated in it, what of
// that was still live when it ended (with stacks) and the net growth of the process's device memory from
// the previous instance's end to this one's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/report/figures.h"
#include "analyzer/report/model_input.h"

namespace gpumemtrace::report {

// One instance of a phase. Its figures, declared once for the struct, the JSON writer (same names, in this
// order) and the contract test. X(type, member, initial value).
#define GPUMEMTRACE_PHASE_INSTANCE_FIGURES(X)                                                                     \
  X(uint32_t, number, 0) /* 1, 2, ... in the order the instances started */                                     \
  X(uint32_t, thread, 0)                                                                                          \
  X(uint64_t, start_ns, 0)                                                                                        \
  X(uint64_t, end_ns, 0)                                                                                          \
  X(bool, ended, true) /* false: still open when the trace ends (end_ns is the trace's end) */                   \
  X(uint64_t, live_at_start_bytes, 0)                                                                             \
  X(uint64_t, live_at_end_bytes, 0)                                                                               \
  X(uint64_t, peak_bytes, 0)                                                                                      \
  X(uint64_t, peak_time_ns, 0)                                                                                    \
  X(uint64_t, allocated_bytes, 0)                                                                                 \
  X(uint64_t, allocations, 0)                                                                                     \
  X(uint64_t, left_live_bytes, 0)                                                                                 \
  X(uint64_t, left_live_allocations, 0)                                                                           \
  X(std::optional<int64_t>, growth_bytes, std::nullopt) /* live at its end - at the previous one's; none for #1 */
struct PhaseInstanceFigures {
#define GPUMEMTRACE_FIGURE_MEMBER(type, member, initial) type member = initial;
  GPUMEMTRACE_PHASE_INSTANCE_FIGURES(GPUMEMTRACE_FIGURE_MEMBER)
#undef GPUMEMTRACE_FIGURE_MEMBER
  std::vector<SiteFigures> left_live;  // the --top largest sites of what was left live
};

struct PhaseFigures {
  std::string path;  // "step/forward"
  std::vector<PhaseInstanceFigures> instances;
};

// A phase pushed again and again on a thread without pops (a loop whose pop a `continue` skips).
struct UnpoppedPhase {
  std::string name;
  uint32_t thread = 0;
  uint64_t open_pushes = 0;  // pushes of it still open at the end of the trace (2 or more)
};

// Records that do not add up.
struct PhaseBalance {
  std::vector<UnpoppedPhase> unpopped;  // the most open pushes first, at most 5
  uint64_t unpopped_names = 0;          // all of them, when there are more than 5
  uint64_t deeper_than_max = 0;         // pushes deeper than replay::kMaxPhaseDepth: counted in the phase there
  uint64_t unmatched_ends = 0;          // pops with nothing open in their domain, ends of ranges not open
};

struct PhasesModel {
  std::vector<PhaseFigures> phases;  // in the order each phase path was first entered
  PhaseBalance balance;
};

PhasesModel phases_model(ModelInput& input);
// One instance's figures, but growth_bytes (which needs the instance before it).
PhaseInstanceFigures instance_figures(ModelInput& input, const replay::PhaseInstance& instance);

}  // namespace gpumemtrace::report
