// A value over time, kept as one figure per window (its minimum or its maximum in that window), for the
// timeline and for growth over equal time slices (growth over a phase's instances keeps its floors in
// phase_windows.h). Windows are numbered from 0 by whoever drives them; a series is brought up to date
// lazily, so a value that does not change costs nothing until it is read or changed again. When there are
// too many windows, pairs are merged (halve()). The closed windows are kept as runs of equal figures: a
// PyTorch snapshot's history has a heap per segment, each changing a few times over hundreds of windows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpumemtrace::replay {

enum class Reduce : uint8_t { Min, Max };

template <Reduce kReduce>
class WindowedSeries {
 public:
  uint64_t current() const { return current_; }

  // The value changes now, in window `window` (never an earlier window than the last call's).
  void set(uint32_t window, uint64_t value) {
    catch_up(window);
    current_ = value;
    open_ = reduce(open_, value);
  }

  // Windows 0 .. window-1 are closed: the open one with what it held, those after it with the value.
  // Called three times per event (by set()), nearly always in the open window: only that test is inlined.
  [[gnu::always_inline]] void catch_up(uint32_t window) {
    if (window > end_) [[unlikely]] close_until(window);
  }

  // Merges windows pairwise: window w becomes w / 2. `window` is the open window before the merge.
  void halve(uint32_t window) {
    catch_up(window);
    if (end_ % 2 == 1) {  // the open window pairs with the last closed one, which the last run holds
      open_ = reduce(open_, runs_.empty() ? 0 : runs_.back().value);
      --end_;
      if (!runs_.empty() && runs_.back().window == end_) runs_.pop_back();
    }
    // A merged window can differ from the one before it only where a run starts in it or in the pair before.
    // Merged into one scratch vector for all series, then copied back into runs_'s own memory: every heap
    // of a long history is halved many times, and a new vector each time was an allocation each time.
    static thread_local std::vector<Run> merged;
    merged.clear();
    size_t run = 0;
    auto value_at = [&](uint32_t w) {  // w increasing from call to call
      while (run + 1 < runs_.size() && runs_[run + 1].window <= w) ++run;
      return run < runs_.size() && runs_[run].window <= w ? runs_[run].value : 0;
    };
    uint32_t done = 0;  // merged windows before it are appended
    for (const Run& r : runs_) {
      for (uint32_t pair = r.window / 2; pair <= r.window / 2 + 1 && pair < end_ / 2; ++pair) {
        if (pair < done) continue;
        uint64_t first = value_at(2 * pair);
        append(merged, pair, reduce(first, value_at(2 * pair + 1)));
        done = pair + 1;
      }
    }
    runs_.assign(merged.begin(), merged.end());
    end_ /= 2;
  }

  // One figure per window 0 .. window (the last one still open).
  std::vector<uint64_t> windows(uint32_t window) const {
    std::vector<uint64_t> out(static_cast<size_t>(window) + 1, current_);
    std::fill(out.begin(), out.begin() + std::min(end_, window), uint64_t{0});
    for (size_t i = 0; i < runs_.size(); ++i) {
      uint32_t to = std::min(i + 1 < runs_.size() ? runs_[i + 1].window : end_, window);
      std::fill(out.begin() + runs_[i].window, out.begin() + to, runs_[i].value);
    }
    if (end_ <= window) out[end_] = open_;
    return out;
  }

  // How many runs of equal closed windows are kept in memory.
  size_t stored_runs() const { return runs_.size(); }

 private:
  struct Run {
    uint32_t window;  // the first window of the run; it lasts until the next run's or the open window
    uint64_t value;
  };
  // catch_up's work when `window` is past the open one.
  [[gnu::noinline]] void close_until(uint32_t window) {
    append(runs_, end_, open_);
    if (end_ + 1 < window) append(runs_, end_ + 1, current_);
    end_ = window;
    open_ = current_;
  }
  static uint64_t reduce(uint64_t a, uint64_t b) { return kReduce == Reduce::Min ? std::min(a, b) : std::max(a, b); }
  // Window `window`, after the last run, holds `value` (the windows before the first run hold 0).
  static void append(std::vector<Run>& runs, uint32_t window, uint64_t value) {
    if (value == (runs.empty() ? 0 : runs.back().value)) return;
    if (runs.capacity() == 0) runs.reserve(4);  // one allocation, not three, for a segment's few runs
    runs.push_back({window, value});
  }

  std::vector<Run> runs_;
  uint32_t end_ = 0;  // the open window: those before it are closed
  uint64_t open_ = 0;
  uint64_t current_ = 0;
};

}  // namespace gpumemtrace::replay
