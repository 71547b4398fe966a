// A running process traced by gpumemtrace, found through /proc: whether the tracer is loaded in it, the trace
// it writes (the file it maps), and that the trace is its own. `snapshot` and `top` attach to a process so.
#pragma once

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>

#include "gpumemtrace/trace_records.h"

namespace gpumemtrace::cli {

// What /proc/PID/maps shows of the tracer: whether it is loaded, and the trace file it writes into.
struct TracedProcess {
  bool tracer_loaded = false;
  std::optional<std::string> trace;
};

// nullopt when the maps cannot be read; `error` is then errno (ENOENT: no such process).
std::optional<TracedProcess> read_maps(long pid, int& error);

// What the trace says of its process, and its TorchHook record: the hook is on (read until it is found; it
// comes early in a trace). Throws trace::OpenError.
struct TraceOfProcess {
  uint64_t pid = 0;
  uint64_t start_wall_ns = 0;
  std::optional<trace::TorchHook> hook;
};
TraceOfProcess read_trace_of(const std::string& path);

// Why the trace that process `pid` maps is not its own (another pid, or begun before the process started:
// a process given the pid of one that ended); nullopt when it is.
std::optional<std::string> not_its_trace(long pid, const std::string& path, const TraceOfProcess& trace);

// The process at PID when the command started, held with a pidfd: a signal can reach only it, never a
// process that is given its PID after it ends. Where the kernel has no pidfd (before Linux 5.3), kill(2).
class HeldProcess {
 public:
  explicit HeldProcess(long pid);
  ~HeldProcess();
  HeldProcess(const HeldProcess&) = delete;
  HeldProcess& operator=(const HeldProcess&) = delete;
  bool gone() const { return error_ == ESRCH; }
  // 0, or errno (ESRCH: it has ended).
  int signal(int number) const;
  // Whether it has ended (also when it is a zombie its parent has not waited for yet).
  bool ended() const;

 private:
  long pid_;
  int fd_;
  int error_ = 0;
};

// "PID" as a process id above 0; nullopt for anything else.
std::optional<long> parse_pid(const std::string& text);

}  // namespace gpumemtrace::cli
