// The passes over a trace: each reading of its records, what it reads, what it produces and when it runs.
// A report costs the passes it makes (Analysis::passes counts them); a new pass is one entry here, and the
// function that makes it says which it is.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace gpumemtrace::analysis {

enum class Pass : uint8_t { First, Join, Joined, UsedView, GrowthWindows, Moments, Export, Recorded, History, Count };

struct PassInfo {
  Pass pass;
  std::string_view name;
  std::string_view reads;
  std::string_view produces;
  std::string_view runs;
};

inline constexpr PassInfo kPasses[] = {
    {Pass::First, "first reading", "the trace, or a PyTorch snapshot made into one",
     "the replay every report starts from, and the PyTorch snapshots the trace names", "always (analyze)"},
    {Pass::Join, "join", "the trace's device allocations, mappings and failures, and the snapshot files",
     "the snapshots' history as heap records, each placed among the trace's records (snapshot_join.h)",
     "when the trace names PyTorch snapshots (analyze)"},
    {Pass::Joined, "joined reading", "the trace with the joined records among its own",
     "the replay again, with PyTorch's heaps", "after a join that brought records (analyze)"},
    {Pass::UsedView, "used view", "the trace again",
     "the replay of the used view (the heaps' blocks in place of their segments), with growth's windows",
     "alongside the first reading for the reports that show the used view, from the trace's first heap on "
     "(used_alongside.h); else when a model asks for the used view of a trace with heaps (ModelInput); once more "
     "if an allocation was taken for a heap segment by mistake, or if the reading alongside was not the used "
     "view's or was stopped (growth's windows follow a phase)"},
    {Pass::GrowthWindows, "growth windows", "the trace again",
     "the replay of the reserved view with growth's windows following a phase",
     "when growth follows a phase in the reserved view (ModelInput)"},
    {Pass::Moments, "moments", "the trace again", "the live sets at the moments the HTML page can show",
     "for the viewer report (html)"},
    {Pass::Export, "export", "the trace again", "what an export needs beyond the replay (memory-viz: every change)",
     "for the exports that ask (gpumemtrace export)"},
    {Pass::Recorded, "recorded requests",
     "the trace's PyTorch snapshot records, out-of-memory failures and heap records (no replay); not made for a "
     "snapshot, whose first bytes say it is the history itself",
     "the snapshots it names, each device's memory, and the blocks a sub-allocator handed out as requests "
     "(report/recorded_history.h)",
     "for whatif and fit, before their replays of the allocator model"},
    {Pass::History, "history", "the PyTorch snapshot files a trace names (or the snapshot itself)",
     "their histories joined, for the allocator model's replays (report/recorded_history.h)",
     "for whatif and fit, and for the oom report's what-if of a failure in PyTorch's cache"},
};
static_assert(std::size(kPasses) == static_cast<size_t>(Pass::Count));
constexpr bool passes_in_order() {
  for (size_t i = 0; i < std::size(kPasses); ++i)
    if (static_cast<size_t>(kPasses[i].pass) != i) return false;
  return true;
}
static_assert(passes_in_order());

constexpr const PassInfo& pass_info(Pass pass) { return kPasses[static_cast<size_t>(pass)]; }

// How many times each pass read the trace.
class PassCounts {
 public:
  void ran(Pass pass) { ++counts_[static_cast<size_t>(pass)]; }
  uint32_t operator[](Pass pass) const { return counts_[static_cast<size_t>(pass)]; }
  // Every reading of the trace.
  uint32_t readings() const {
    uint32_t total = 0;
    for (uint32_t count : counts_) total += count;
    return total;
  }

 private:
  std::array<uint32_t, static_cast<size_t>(Pass::Count)> counts_{};
};

}  // namespace gpumemtrace::analysis
