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

  // Windows 0 .. window-1 are closed: fill them in with what the value was. Windows before the first that
  // held anything but 0 are not stored (a series of a heap made late in a long trace starts there).
  void catch_up(uint32_t window) {
    if (closed_.empty() && open_ == 0 && current_ == 0) {
      first_ = std::max(first_, window);
      return;
    }
    while (end() < window) {
      closed_.push_back(open_);
      open_ = current_;
    }
  }

  // Merges windows pairwise: window w becomes w / 2. `window` is the open window before the merge. The
  // windows after the last stored one all held current() and stay unstored (a heap destroyed long ago
  // keeps no figure for each window since).
  void halve(uint32_t window) {
    if (end() < window) catch_up(end() + 1);  // from end() on, every window holds current_
    if (first_ % 2 == 1) {  // the unstored window before the first pairs with it
      closed_.insert(closed_.begin(), 0);
      --first_;
    }
    if (closed_.size() % 2 == 1) {
      if (end() == window) {  // the open window pairs with the last closed one
        open_ = reduce(open_, closed_.back());
        closed_.pop_back();
      } else {  // the last closed one pairs with the next, which held current_ as open_ does
        closed_.push_back(open_);
      }
    }
    for (size_t i = 0; i < closed_.size() / 2; ++i) closed_[i] = reduce(closed_[2 * i], closed_[2 * i + 1]);
    closed_.resize(closed_.size() / 2);
    first_ /= 2;
  }

  // One figure per window 0 .. window (the last one still open).
  std::vector<uint64_t> windows(uint32_t window) const {
    std::vector<uint64_t> out(std::min(first_, window), 0);
    out.insert(out.end(), closed_.begin(), closed_.end());
    uint64_t open = open_;
    while (out.size() < window) {
      out.push_back(open);
      open = current_;
    }
    out.push_back(open);
    return out;
  }

  // How many windows are kept in memory (the others are 0 before them or current() after them).
  size_t stored_windows() const { return closed_.size(); }

 private:
  static uint64_t reduce(uint64_t a, uint64_t b) { return kReduce == Reduce::Min ? std::min(a, b) : std::max(a, b); }
  uint32_t end() const { return first_ + static_cast<uint32_t>(closed_.size()); }  // the window open_ is of

  uint32_t first_ = 0;  // the window of closed_[0]; those before it held 0
  std::vector<uint64_t> closed_;
  uint64_t open_ = 0;
  uint64_t current_ = 0;
};

}  // namespace gpumemtrace::replay
