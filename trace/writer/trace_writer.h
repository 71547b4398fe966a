// Writes a trace: the header, then records (include/gpumemtrace/trace_records.h) encoded into a
// MappedFileSink. Each record's body is written first and its token last, so a reader (or a crash) never
// sees half a record. Not thread-safe by itself: the recorder serializes calls, because stack nodes, thread
// switches and the event that needs them must land in the file in that order.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpumemtrace/trace_records.h"
#include "trace/writer/mapped_file_sink.h"
#include "trace/writer/record_encoder.h"

namespace gpumemtrace::writer {

// What the Process record says, with its own strings.
struct ProcessInfo {
  uint64_t pid = 0;
  uint64_t ppid = 0;
  uint64_t start_wall_ns = 0;
  uint64_t max_stack_depth = 0;
  int64_t rank = -1;
  int64_t local_rank = -1;                     // with visible_devices: the Placement record, when either is set
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES; none: unset
  std::vector<std::pair<std::string, std::string>> params;  // the run's named parameters: a Param record each
  std::string hostname;
  std::string executable;
  std::vector<std::string> argv;
};

uint64_t monotonic_ns();

class TraceWriter {
 public:
  // Creates the file, writes the header and the Process record. The clock starts now. The file may be at
  // another path than the one asked for (trace_file.h): path() is where, notice() says why.
  bool open(const std::string& path, const ProcessInfo& process);
  bool is_open() const { return sink_.is_open(); }
  const std::string& path() const { return sink_.path(); }
  const std::string& notice() const { return sink_.notice(); }
  const std::string& error() const { return sink_.error(); }
  // A record could not be written (disk full, size limit): the trace ends here.
  bool failed() const { return sink_.failed(); }

  // Writes one record. Records with a time (trace::Event) happen now: a Time record goes first when the
  // clock has moved; events (trace::kIsEvent) are counted for End. The record's own time and thread are
  // ignored: the thread is the one of the last ThreadNew or ThreadSwitch written.
  template <typename R>
  void write(const R& record) {
    if constexpr (std::is_base_of_v<trace::Event, R>) advance_time();
    if (encoder_.put(out_, record) && trace::kIsEvent<R>) ++events_;
  }

  // Writes End (the number of events written) and closes the file: the trace is complete.
  void end();
  // Drops the file without writing (a forked child holds its parent's mapping).
  void abandon() { sink_.abandon(); }
  void sync() { sink_.sync(); }

  // The time of the next event, read by the caller before it took the lock that orders the records (0:
  // the writer reads the clock itself). A time before the last Time record written counts as that one.
  void set_event_time(uint64_t now_ns) { event_time_ns_ = now_ns; }

  // The clock (monotonic_ns) from which the next event gets a Time record: an event earlier than it needs no
  // exact time (interpose/recording/event_clock.h). It only grows, so a caller may read it without the lock
  // that serializes the writer: an older value is a lower one.
  uint64_t next_time_record_clock_ns() const { return next_time_record_clock_ns_.load(std::memory_order_relaxed); }

  // A CLOCK_MONOTONIC time (monotonic_ns) on the clock of the trace's events: ns since the trace started.
  uint64_t trace_time(uint64_t monotonic) const { return monotonic > start_ns_ ? monotonic - start_ns_ : 0; }

  uint64_t events() const { return events_; }
  uint64_t bytes() const { return sink_.size(); }

 private:
  // Where the encoder puts records: the token is stored last, after the body it announces.
  struct SinkOut {
    MappedFileSink& sink;
    uint8_t* reserve(size_t max_bytes) { return sink.reserve(max_bytes); }
    void finish(uint8_t* start, uint8_t* end, uint8_t token) {
      __atomic_store_n(start, token, __ATOMIC_RELEASE);
      sink.commit(static_cast<size_t>(end - start));
    }
  };

  // Writes a Time record first if the clock moved by the format's granularity since the last one was written.
  // It steps by whole granules, the rest carried to the next step: times stay exact to the granularity, and
  // the steps carry no noise below it for a packed trace to spend bytes on (docs/trace-format.md, "Times").
  // When to write one goes by the clock, not by the carried time, which lags it: by that, a loop of events
  // closer than a granule would get a Time record at every granule boundary, 15 % more of them.
  void advance_time() {
    uint64_t now = event_time_ns_ ? std::exchange(event_time_ns_, 0) : monotonic_ns();
    if (now < next_time_record_clock_ns_.load(std::memory_order_relaxed)) return;
    uint64_t step = (now - last_time_ns_) / format::kTimeGranularityNs * format::kTimeGranularityNs;
    if (encoder_.put(out_, trace::Time{step})) {
      last_time_ns_ += step;
      next_time_record_clock_ns_.store(now + format::kTimeGranularityNs, std::memory_order_relaxed);
    }
  }

  MappedFileSink sink_;
  SinkOut out_{sink_};
  RecordEncoder encoder_;
  uint64_t start_ns_ = 0;      // the trace's time 0
  uint64_t last_time_ns_ = 0;               // the time the reader will have reached
  std::atomic<uint64_t> next_time_record_clock_ns_{0};  // a granule after the last Time record's clock
  uint64_t event_time_ns_ = 0;
  uint64_t events_ = 0;
};

}  // namespace gpumemtrace::writer
