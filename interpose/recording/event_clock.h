// The time of a traced event, taken before the recorder's lock.
//
// CLOCK_MONOTONIC costs about 23 ns through the vDSO on these machines, a fifth of a traced allocation. The
// writer needs the clock's value only when an event may get a Time record: once the clock reached the
// writer's next step (TraceWriter::next_time_record_clock_ns, a microsecond after the last Time record).
// Before that, any time below the step gives the same trace. The processor's time-stamp counter (about
// 10 ns) bounds the clock from above: the thread's last exact reading plus the ticks since, at a rate known
// to be at least the clock's. While that bound is below the step, it stands in for the clock; otherwise the
// clock is read. So an event's recorded time is what the clock would have given, to the microsecond the
// format promises, and events closer than a microsecond read the counter only.
//
// The counter is used only where the kernel keeps CLOCK_MONOTONIC on it (clocksource "tsc"): then it ticks
// at a constant rate, in step on every processor.
#pragma once

#include <atomic>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "trace/writer/trace_writer.h"

namespace gpumemtrace::interpose {

// A thread's last exact reading: the clock, and the counter read just before it.
struct ClockReading {
  uint64_t ticks = 0;
  uint64_t ns = 0;  // 0: none yet
};

// Sources: `uint64_t ticks()` (the time-stamp counter) and `uint64_t ns()` (CLOCK_MONOTONIC).
template <typename Sources>
class EventClock {
 public:
  // How long a calibration runs, and how much the rate found is raised to stay above the clock's: the kernel
  // slews CLOCK_MONOTONIC by at most 0.05 % (NTP), against 1/64 here.
  static constexpr uint64_t kCalibrationNs = 10'000'000;
  // A calibration reading counts only when the counter moved less than this across the clock's read: its
  // ticks then place it within about a microsecond. (One of a thread preempted in between would still give
  // a rate above the clock's, only too far above it for the counter to stand in often.)
  static constexpr uint64_t kTightTicks = 4096;
  // Ticks past this since the last reading are not converted (their product would not fit): the clock is read.
  static constexpr uint64_t kMaxElapsedTicks = uint64_t{1} << 28;
  // Room for a counter a few ticks apart between processors.
  static constexpr uint64_t kSlackNs = 64;

  EventClock(Sources sources, bool counter_usable) : sources_(sources), counter_usable_(counter_usable) {}

  // The time to give the writer for an event now: the clock's reading, or a bound above it that is below
  // `next_step_ns` (so the writer writes no Time record for it, as it would not for the clock's reading).
  // `last` is the calling thread's.
  uint64_t event_time_ns(ClockReading& last, uint64_t next_step_ns) {
    if (!counter_usable_) return sources_.ns();
    uint64_t ticks = sources_.ticks();
    uint64_t rate = ns_per_tick_q32_.load(std::memory_order_relaxed);
    if (rate != 0 && last.ns != 0 && ticks >= last.ticks && ticks - last.ticks < kMaxElapsedTicks) {
      uint64_t bound = last.ns + ((ticks - last.ticks) * rate >> 32) + kSlackNs;
      if (bound < next_step_ns) return bound;
    }
    uint64_t ns = sources_.ns();
    if (rate == 0) calibrate(ticks, ns, sources_.ticks());
    last = ClockReading{ticks, ns};
    return ns;
  }

  // ns per tick in 32.32 fixed point, at least the clock's rate; 0 until calibrated.
  uint64_t ns_per_tick_q32() const { return ns_per_tick_q32_.load(std::memory_order_relaxed); }

 private:
  // The clock read `ns` between the counter's `before` and `after`. The first tight reading is the start;
  // one at least kCalibrationNs later gives the rate: the clock's own reads lay between the counter values,
  // so (ns - start ns) / (before - start after) is at least the clock's rate.
  void calibrate(uint64_t before, uint64_t ns, uint64_t after) {
    if (after < before || after - before > kTightTicks) return;
    int state = start_state_.load(std::memory_order_acquire);
    if (state == kNoStart) {
      if (start_state_.compare_exchange_strong(state, kWritingStart, std::memory_order_acquire)) {
        start_after_ = after;
        start_ns_ = ns;
        start_state_.store(kHaveStart, std::memory_order_release);
      }
      return;
    }
    if (state != kHaveStart || ns < start_ns_ + kCalibrationNs || before <= start_after_) return;
    uint64_t ticks = before - start_after_;
    unsigned __int128 rate = (static_cast<unsigned __int128>(ns - start_ns_) << 32) / ticks;
    rate += rate / 64;
    if (rate == 0 || rate >> 40) return;  // not a counter of this century's processors
    ns_per_tick_q32_.store(static_cast<uint64_t>(rate), std::memory_order_relaxed);
  }

  static constexpr int kNoStart = 0, kWritingStart = 1, kHaveStart = 2;

  Sources sources_;
  bool counter_usable_;
  std::atomic<uint64_t> ns_per_tick_q32_{0};
  std::atomic<int> start_state_{kNoStart};
  uint64_t start_after_ = 0;  // written once, before start_state_ says kHaveStart
  uint64_t start_ns_ = 0;
};

// The hardware's: rdtsc and clock_gettime.
struct HardwareClockSources {
  static uint64_t ticks() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return 0;
#endif
  }
  static uint64_t ns() { return writer::monotonic_ns(); }
};

// True when the kernel keeps CLOCK_MONOTONIC on the time-stamp counter (x86-64, clocksource "tsc").
bool time_stamp_counter_usable();

}  // namespace gpumemtrace::interpose
