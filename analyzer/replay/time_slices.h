// Equal time slices as windows, without knowing in advance how long the trace is: slices start narrow and
// double in width (merging pairs) whenever there would be more than 2 x `target` of them, so at the end
// there are between `target` and 2 x `target` slices of equal width, from the first event on.
// This is one window source; the instances of a phase are the other (phase_windows.h).
#pragma once

#include <cstdint>

namespace gpumemtrace::replay {

class TimeSlices {
 public:
  explicit TimeSlices(uint32_t target, uint64_t first_width_ns = 1000) : target_(target), width_(first_width_ns) {}

  bool started() const { return started_; }
  uint64_t origin_ns() const { return origin_; }
  uint64_t width_ns() const { return width_; }
  uint32_t window() const { return window_; }  // the open window

  void start(uint64_t time_ns) {
    started_ = true;
    origin_ = time_ns;
    next_boundary_ = boundary_after(window_);
  }

  // Moves the open window to the one holding time_ns. on_halve(window) is called before each merge,
  // with the open window as it was; afterwards window() is the new open window.
  template <typename OnHalve>
  void advance(uint64_t time_ns, OnHalve on_halve) {
    if (time_ns >= next_boundary_) [[unlikely]] move_to(time_ns, on_halve);
  }

 private:
  template <typename OnHalve>
  [[gnu::noinline]] void move_to(uint64_t time_ns, OnHalve on_halve) {
    if (!started_) return;
    uint64_t index = (time_ns - origin_) / width_;
    while (index >= 2 * uint64_t{target_}) {
      on_halve(window_);
      window_ /= 2;
      width_ *= 2;
      index = (time_ns - origin_) / width_;
    }
    window_ = static_cast<uint32_t>(index);
    next_boundary_ = boundary_after(window_);
  }

  uint64_t boundary_after(uint32_t window) const {
    unsigned __int128 boundary = origin_ + static_cast<unsigned __int128>(window + 1) * width_;
    return boundary > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(boundary);
  }

  uint32_t target_;
  uint64_t width_;
  uint64_t origin_ = 0;
  uint32_t window_ = 0;
  uint64_t next_boundary_ = UINT64_MAX;  // where the open window ends
  bool started_ = false;
};

}  // namespace gpumemtrace::replay
