#include "analyzer/cli/traced_process.h"

#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "common/clock.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::cli {

namespace fs = std::filesystem;

namespace {

bool is_trace(const std::string& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return false;  // never open a device the process has mapped
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof format::kMagic] = {};
  return in.read(magic, sizeof magic) && std::memcmp(magic, format::kMagic, sizeof magic) == 0;
}

// How long ago process `pid` started: /proc/PID/stat's start time (field 22, clock ticks since boot) on the
// boot clock. nullopt when it cannot be read.
std::optional<uint64_t> process_age_ns(long pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t name_end = text.rfind(')');  // the command name may hold spaces and parentheses
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(name_end + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  if (!fields || field.empty() || field.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  uint64_t started = std::stoull(field) * 1000000000ull / static_cast<uint64_t>(sysconf(_SC_CLK_TCK));
  uint64_t now = clock_ns(CLOCK_BOOTTIME);
  return now > started ? now - started : 0;
}

}  // namespace

std::optional<TracedProcess> read_maps(long pid, int& error) {
  std::ifstream maps(fmt::format("/proc/{}/maps", pid));
  if (!maps) {
    error = errno;
    return std::nullopt;
  }
  TracedProcess process;
  std::string line;
  while (std::getline(maps, line)) {
    size_t path_start = line.find('/');
    if (path_start == std::string::npos || line.ends_with(" (deleted)")) continue;
    std::string path = line.substr(path_start);
    if (fs::path(path).filename() == "libgpumemtrace.so")
      process.tracer_loaded = true;
    else if (!process.trace && is_trace(path))
      process.trace = path;
  }
  return process;
}

TraceOfProcess read_trace_of(const std::string& path) {
  trace::Reader reader(path);
  TraceOfProcess out;
  while (const trace::Record* record = reader.next()) {
    if (const auto* process = std::get_if<trace::Process>(record)) {
      out.pid = process->pid;
      out.start_wall_ns = process->start_wall_ns;
    } else if (const auto* hook = std::get_if<trace::TorchHook>(record)) {
      out.hook = *hook;
      break;
    }
  }
  return out;
}

// A second of slack covers the clock tick and the two clocks compared.
std::optional<std::string> not_its_trace(long pid, const std::string& path, const TraceOfProcess& trace) {
  if (trace.pid != static_cast<uint64_t>(pid))
    return fmt::format("the trace {} that process {} maps records process {}, not it", path, pid, trace.pid);
  std::optional<uint64_t> age = process_age_ns(pid);
  uint64_t wall = clock_ns(CLOCK_REALTIME);
  uint64_t trace_age = wall > trace.start_wall_ns ? wall - trace.start_wall_ns : 0;
  if (!age) return fmt::format("the start time of process {} cannot be read", pid);
  if (trace_age > *age + 1000000000ull)
    return fmt::format("process {} started {:.0f} s after its trace {} began: it is another process given the "
                       "same process id",
                       pid, static_cast<double>(trace_age - *age) / 1e9, path);
  return std::nullopt;
}

HeldProcess::HeldProcess(long pid) : pid_(pid), fd_(static_cast<int>(syscall(SYS_pidfd_open, pid, 0))) {
  if (fd_ < 0) error_ = errno;
}

HeldProcess::~HeldProcess() {
  if (fd_ >= 0) close(fd_);
}

int HeldProcess::signal(int number) const {
  if (fd_ >= 0) return syscall(SYS_pidfd_send_signal, fd_, number, nullptr, 0) == 0 ? 0 : errno;
  return kill(static_cast<pid_t>(pid_), number) == 0 ? 0 : errno;
}

bool HeldProcess::ended() const {
  if (fd_ < 0) return signal(0) == ESRCH;
  pollfd ready{fd_, POLLIN, 0};  // a pidfd is readable once its process has ended
  return poll(&ready, 1, 0) == 1;
}

std::optional<long> parse_pid(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  long pid = std::stol(text);
  return pid > 0 ? std::optional(pid) : std::nullopt;
}

}  // namespace gpumemtrace::cli
