// A value over time, kept as one figure per window (its minimum or its maximum in that window), for the
// timeline and for growth over equal time slices (growth over a phase's instances keeps its floors in
// phase_windows.h). Windows are numbered from 0 by whoever drives them; a series is brought up to date
// lazily, so a value that does not change costs nothing until it is read or changed again. When there are
// too many windows, pairs are merged (halve()).
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

  // Windows 0 .. window-1 are closed: fill them in with what the value was.
  void catch_up(uint32_t window) {
    while (closed_.size() < window) {
      closed_.push_back(open_);
      open_ = current_;
    }
  }

  // Merges windows pairwise: window w becomes w / 2. `window` is the open window before the merge.
  void halve(uint32_t window) {
    catch_up(window);
    if (closed_.size() % 2 == 1) {  // the open window pairs with the last closed one
      open_ = reduce(open_, closed_.back());
      closed_.pop_back();
    }
    for (size_t i = 0; i < closed_.size() / 2; ++i) closed_[i] = reduce(closed_[2 * i], closed_[2 * i + 1]);
    closed_.resize(closed_.size() / 2);
  }

  // One figure per window 0 .. window (the last one still open).
  std::vector<uint64_t> windows(uint32_t window) const {
    std::vector<uint64_t> out = closed_;
    uint64_t open = open_;
    while (out.size() < window) {
      out.push_back(open);
      open = current_;
    }
    out.push_back(open);
    return out;
  }

 private:
  static uint64_t reduce(uint64_t a, uint64_t b) { return kReduce == Reduce::Min ? std::min(a, b) : std::max(a, b); }

  std::vector<uint64_t> closed_;
  uint64_t open_ = 0;
  uint64_t current_ = 0;
};

}  // namespace gpumemtrace::replay
