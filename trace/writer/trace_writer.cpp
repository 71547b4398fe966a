#include "trace/writer/trace_writer.h"

#include <time.h>

namespace gpumemtrace::writer {

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool TraceWriter::open(const std::string& path, const ProcessInfo& process) {
  uint8_t header[format::kHeaderSize];
  format::put_header(header);
  if (!sink_.open(path, header)) return false;
  format::put_header(sink_.reserve(format::kHeaderSize));
  sink_.commit(format::kHeaderSize);
  start_ns_ = last_time_ns_ = monotonic_ns();
  next_time_record_clock_ns_.store(start_ns_ + format::kTimeGranularityNs, std::memory_order_relaxed);
  encoder_.restart();
  events_ = 0;

  std::vector<std::string_view> argv(process.argv.begin(), process.argv.end());
  write(trace::Process{process.pid, process.ppid, process.start_wall_ns, process.max_stack_depth, process.rank,
                       process.hostname, process.executable, argv});
  if (process.local_rank >= 0 || process.visible_devices)
    write(trace::Placement{process.local_rank, process.visible_devices ? 1u : 0u, process.visible_devices.value_or("")});
  for (const auto& [name, value] : process.params) write(trace::Param{name, value});
  // Named only now: a file at the trace's path always reads as a trace, however early its process is killed.
  return sink_.publish();
}

void TraceWriter::end() {
  if (!sink_.is_open()) return;
  trace::End end;
  end.events_written = events_;
  write(end);
  sink_.close();
}

}  // namespace gpumemtrace::writer
