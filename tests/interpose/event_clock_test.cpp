// The event clock against a simulated machine whose clock is a known function of its counter: an event's time
// is the clock's, or a bound that gives the writer the same Time records; the counter stands in for the clock
// only once its rate is known, and only from readings it can trust.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpumemtrace/trace_format.h"
#include "interpose/recording/event_clock.h"

namespace gpumemtrace::interpose {
namespace {

// A counter at 2.7 GHz and CLOCK_MONOTONIC computed from it; every read takes a few ticks.
struct Machine {
  uint64_t tick = 1'000'000;
  uint64_t ticks_per_read = 30;
  uint64_t extra_ticks_after_next_clock_read = 0;  // a thread preempted inside clock_gettime
  int64_t counter_skew = 0;                     // what ticks() adds to the counter (another processor's)
  uint64_t clock_reads = 0;
  uint64_t counter_reads = 0;
  uint64_t clock_at(uint64_t at_tick) const { return 5'000'000'000 + at_tick * 10 / 27; }
  void wait_ns(uint64_t ns) { tick += ns * 27 / 10; }
};

struct FakeSources {
  Machine* machine;
  uint64_t ticks() {
    machine->tick += machine->ticks_per_read;
    ++machine->counter_reads;
    return machine->tick + machine->counter_skew;
  }
  uint64_t ns() {
    machine->tick += machine->ticks_per_read / 2;
    uint64_t ns = machine->clock_at(machine->tick);
    machine->tick += machine->ticks_per_read / 2 + machine->extra_ticks_after_next_clock_read;
    machine->extra_ticks_after_next_clock_read = 0;
    ++machine->clock_reads;
    return ns;
  }
};

using Clock = EventClock<FakeSources>;
constexpr uint64_t kNoStep = UINT64_MAX;

// Events every `gap_ns` until the clock is calibrated; returns the number of events it took.
int calibrate(Clock& clock, ClockReading& reading, Machine& machine, uint64_t gap_ns) {
  int events = 0;
  while (clock.ns_per_tick_q32() == 0 && events < 1'000'000) {
    clock.event_time_ns(reading, kNoStep);
    machine.wait_ns(gap_ns);
    ++events;
  }
  return events;
}

TEST(EventClock, ReadsOnlyTheClockWhenTheCounterIsNotUsable) {
  Machine machine;
  Clock clock(FakeSources{&machine}, false);
  ClockReading reading;
  for (int i = 0; i < 1000; ++i) {
    machine.wait_ns(100);
    uint64_t before = machine.clock_at(machine.tick);
    uint64_t time = clock.event_time_ns(reading, kNoStep);
    EXPECT_GE(time, before);
    EXPECT_LE(time, machine.clock_at(machine.tick));
  }
  EXPECT_EQ(machine.clock_reads, 1000u);
  EXPECT_EQ(machine.counter_reads, 0u);
  EXPECT_EQ(clock.ns_per_tick_q32(), 0u);
}

TEST(EventClock, ReadsTheClockUntilTheCounterIsCalibratedOverTenMilliseconds) {
  Machine machine;
  Clock clock(FakeSources{&machine}, true);
  ClockReading reading;
  int events = calibrate(clock, reading, machine, 100);
  // Ten milliseconds of events 100 ns apart, each read taking about 33 ns.
  EXPECT_GT(events, 70'000);
  EXPECT_LT(events, 80'000);
  EXPECT_EQ(machine.clock_reads, static_cast<uint64_t>(events));
  // At least the clock's 10/27 ns per tick, and at most 1/64 above it with the reads' uncertainty.
  double rate = static_cast<double>(clock.ns_per_tick_q32()) / 4294967296.0;
  EXPECT_GE(rate, 10.0 / 27.0);
  EXPECT_LE(rate, 10.0 / 27.0 * (1.0 + 1.0 / 64 + 1e-4));
}

TEST(EventClock, AReadingInterruptedInsideTheClockDoesNotStartTheCalibration) {
  Machine machine;
  Clock clock(FakeSources{&machine}, true);
  ClockReading reading;
  // The first reading is held up 2 ms inside clock_gettime, after the clock was read: its counter values do
  // not place it, and as the start of the calibration it would take 2 ms of ticks out of ten.
  machine.extra_ticks_after_next_clock_read = 2'000'000 * 27 / 10;
  uint64_t start = machine.clock_at(machine.tick);
  calibrate(clock, reading, machine, 100);
  EXPECT_GE(machine.clock_at(machine.tick) - start, 12'000'000u);
  double rate = static_cast<double>(clock.ns_per_tick_q32()) / 4294967296.0;
  EXPECT_GE(rate, 10.0 / 27.0);
  EXPECT_LE(rate, 10.0 / 27.0 * (1.0 + 1.0 / 64 + 1e-4));
}

// The writer's rule (TraceWriter::advance_time): a Time record when an event's time reaches the next step.
struct TimeRecords {
  uint64_t next_step = 0;
  std::vector<std::pair<size_t, uint64_t>> written;  // (event, clock)
  void event(size_t index, uint64_t time) {
    if (time < next_step) return;
    written.emplace_back(index, time);
    next_step = time + format::kTimeGranularityNs;
  }
};

// Events at random gaps around a microsecond: every time the clock gives is exact or a bound below the step
// above the true time, and the Time records are those the clock's own readings give.
TEST(EventClock, GivesTheTimeRecordsOfTheClockReadingFewerClocks) {
  Machine machine;
  Clock clock(FakeSources{&machine}, true);
  ClockReading reading;
  calibrate(clock, reading, machine, 100);
  machine.clock_reads = 0;

  std::mt19937_64 random(42);
  std::uniform_int_distribution<uint64_t> gap(0, 400);
  TimeRecords with_counter, with_clock;
  with_counter.next_step = with_clock.next_step = machine.clock_at(machine.tick) + format::kTimeGranularityNs;
  constexpr size_t kEvents = 200'000;
  size_t bounds = 0;
  for (size_t i = 0; i < kEvents; ++i) {
    machine.wait_ns(i % 1000 == 999 ? 50'000 : gap(random));
    uint64_t tick_before = machine.tick;
    uint64_t reads_before = machine.clock_reads;
    uint64_t time = clock.event_time_ns(reading, with_counter.next_step);
    bool from_counter = machine.clock_reads == reads_before;
    // The true time of the event: the clock when the counter was read.
    uint64_t truth = machine.clock_at(tick_before + machine.ticks_per_read);
    if (from_counter) {
      ++bounds;
      EXPECT_LT(time, with_counter.next_step) << "event " << i;
      EXPECT_GE(time, truth) << "event " << i;
    } else {
      EXPECT_GE(time, truth) << "event " << i;
      EXPECT_LE(time, truth + 100) << "event " << i;
    }
    with_clock.event(i, from_counter ? truth : time);
    with_counter.event(i, time);
  }
  EXPECT_EQ(with_counter.written, with_clock.written);
  EXPECT_EQ(machine.clock_reads, kEvents - bounds);
  // About 230 ns between events: most fall in a microsecond the last reading already covers.
  EXPECT_GT(bounds, kEvents / 2);
}

TEST(EventClock, ReadsTheClockWhenTheCounterWentBackOrFarAhead) {
  Machine machine;
  Clock clock(FakeSources{&machine}, true);
  ClockReading reading;
  calibrate(clock, reading, machine, 100);
  uint64_t step = clock.event_time_ns(reading, kNoStep) + 1'000'000;
  machine.clock_reads = 0;
  EXPECT_LT(clock.event_time_ns(reading, step), step);
  EXPECT_EQ(machine.clock_reads, 0u);

  machine.counter_skew = -1'000;  // another processor's counter, behind
  uint64_t time = clock.event_time_ns(reading, step);
  EXPECT_EQ(machine.clock_reads, 1u);
  EXPECT_EQ(time, machine.clock_at(machine.tick - machine.ticks_per_read / 2));

  machine.counter_skew = 0;
  machine.wait_ns(200'000'000);  // past kMaxElapsedTicks
  time = clock.event_time_ns(reading, kNoStep);
  EXPECT_EQ(machine.clock_reads, 2u);
  EXPECT_EQ(time, machine.clock_at(machine.tick - machine.ticks_per_read / 2));
}

TEST(EventClock, AThreadWithoutAReadingReadsTheClock) {
  Machine machine;
  Clock clock(FakeSources{&machine}, true);
  ClockReading first_thread;
  calibrate(clock, first_thread, machine, 100);
  ClockReading second_thread;
  machine.clock_reads = 0;
  clock.event_time_ns(second_thread, kNoStep);
  EXPECT_EQ(machine.clock_reads, 1u);
  uint64_t step = second_thread.ns + 1'000'000;
  EXPECT_LT(clock.event_time_ns(second_thread, step), step);
  EXPECT_EQ(machine.clock_reads, 1u);
}

}  // namespace
}  // namespace gpumemtrace::interpose
