// gpumemtrace snapshot [--wait SECONDS] PID: asks a traced process whose PyTorch hook is on for a snapshot of
// PyTorch's caching allocator (SIGUSR1), after checking that the signal cannot end it, and prints where the
// snapshot was written.
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "analyzer/cli/command.h"
#include "analyzer/cli/command_line.h"
#include "analyzer/cli/traced_process.h"
#include "trace/reader/reader.h"
#include "common/terminal_text.h"

namespace gpumemtrace::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSnapshotHelp =
    "usage: gpumemtrace snapshot [--wait SECONDS] PID\n"
    "\n"
    "Asks process PID for a snapshot of PyTorch's caching allocator: sends it SIGUSR1, waits until the\n"
    "snapshot is written beside its trace (TRACE.torch-usr1-N.pickle, the format of PyTorch's\n"
    "torch.cuda.memory._dump_snapshot) and prints its path. The process must be traced by gpumemtrace with its\n"
    "PyTorch hook on: its trace says so, and that the hook took SIGUSR1; and the trace must be that process's\n"
    "own (its pid, begun after the process started: a process id given again is not signalled). Otherwise\n"
    "nothing is sent, because SIGUSR1 would end the process. Python runs signal handlers on its main thread,\n"
    "between two bytecodes: a main thread busy in native code answers when it comes back.\n";

constexpr std::string_view kSnapshotExitStatus =
    "Exit status: 0 when the snapshot was written (with --wait 0: asked for), 1 for a bad command line, 2 when\n"
    "the process cannot be asked (no such process, not traced, no PyTorch hook or SIGUSR1 not taken; one line\n"
    "on stderr), 3 for a system error (the signal cannot be sent, the process ended or wrote nothing in time).\n";

// Writes "gpumemtrace snapshot: MESSAGE" and returns `status`.
int fail(int status, const std::string& message) { return command_error("snapshot", message, status); }

// Whether the process has a handler for SIGUSR1 now (SigCgt in /proc/PID/status).
bool catches_usr1(long pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("SigCgt:")) return (std::stoull(line.substr(7), nullptr, 16) >> (SIGUSR1 - 1)) & 1;
  }
  return false;
}

// The SIGUSR1 snapshots beside the trace now, by file name: the inode tells a file written again apart.
std::map<std::string, ino_t> usr1_snapshots(const fs::path& trace) {
  std::string prefix =
      trace.filename().string() + ".torch-" +
      std::string(format::kTorchSnapshotReasonNames[static_cast<size_t>(format::TorchSnapshotReason::Signal)]) + "-";
  std::map<std::string, ino_t> found;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(trace.parent_path(), error)) {
    std::string name = entry.path().filename().string();
    struct stat st;
    if (name.starts_with(prefix) && name.ends_with(".pickle") && stat(entry.path().c_str(), &st) == 0)
      found[name] = st.st_ino;
  }
  return found;
}

int snapshot_main(std::span<const std::string> args) {
  CommandLine line(kSnapshotHelp, kSnapshotExitStatus);
  std::optional<std::string> wait_option;
  std::string pid_text;
  line.option("--wait", "SECONDS", wait_option, "how long to wait for the snapshot (default 30; 0: do not wait)");
  line.operand("process id", pid_text);
  if (!line.parse(args)) return kExitOk;
  uint64_t wait_seconds = wait_option ? parse_number("--wait", *wait_option, 86400) : 30;
  std::optional<long> parsed_pid = parse_pid(pid_text);
  if (!parsed_pid) throw UsageError("the process id " + pid_text + " is not a number above 0");
  long pid = *parsed_pid;
  HeldProcess held(pid);
  if (held.gone()) return fail(kExitBadTrace, fmt::format("there is no process {}", pid));

  int error = 0;
  std::optional<TracedProcess> process = read_maps(pid, error);
  if (!process) {
    if (error == ENOENT) return fail(kExitBadTrace, fmt::format("there is no process {}", pid));
    return fail(kExitSystem, fmt::format("cannot read /proc/{}/maps: {}", pid, std::strerror(error)));
  }
  if (!process->tracer_loaded)
    return fail(kExitBadTrace, fmt::format("process {} is not traced by gpumemtrace (libgpumemtrace.so is not loaded "
                                           "in it): nothing sent",
                                           pid));
  if (!process->trace)
    return fail(kExitBadTrace,
                fmt::format("process {} writes no trace (a child that has made no GPU allocation): nothing sent", pid));
  TraceOfProcess traced;
  try {
    traced = read_trace_of(*process->trace);
  } catch (const trace::OpenError& open_error) {
    return trace_error(*process->trace, open_error.what());
  }
  if (std::optional<std::string> why = not_its_trace(pid, *process->trace, traced))
    return fail(kExitBadTrace, *why + ": nothing sent");
  const std::optional<trace::TorchHook>& hook = traced.hook;
  if (!hook)
    return fail(kExitBadTrace,
                fmt::format("the PyTorch hook is not on in process {} (its trace {} says nothing of it: torch was not "
                            "imported at its first GPU allocation, GPUMEMTRACE_TORCH=0, or its torch lacks what the "
                            "hook needs, which its stderr says); SIGUSR1 would end it: nothing sent",
                            pid, *process->trace));
  if (hook->usr1 == static_cast<uint64_t>(format::TorchSignal::NotTaken))
    return fail(kExitBadTrace, fmt::format("the PyTorch hook of process {} did not take SIGUSR1 (the program handles "
                                           "it outside Python): nothing sent",
                                           pid));
  if (!catches_usr1(pid))
    return fail(kExitBadTrace,
                fmt::format("process {} no longer catches SIGUSR1 (the program reset it): nothing sent", pid));

  fs::path trace(*process->trace);
  std::map<std::string, ino_t> before = usr1_snapshots(trace);
  if (int signal_error = held.signal(SIGUSR1))
    return fail(kExitSystem, fmt::format("cannot signal process {}: {}", pid, std::strerror(signal_error)));
  std::string pattern = (trace.parent_path() / (trace.filename().string() + ".torch-usr1-N.pickle")).string();
  if (wait_seconds == 0) {
    fmt::print("asked process {} for a PyTorch snapshot: {}\n", pid, terminal_text(pattern));
    return kExitOk;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const auto& [name, inode] : usr1_snapshots(trace)) {
      auto old = before.find(name);
      if (old == before.end() || old->second != inode) {
        fmt::print("{}\n", terminal_text((trace.parent_path() / name).string()));
        return kExitOk;
      }
    }
    if (held.signal(0) == ESRCH)
      return fail(kExitSystem, fmt::format("process {} ended before writing the snapshot", pid));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fail(kExitSystem, fmt::format("process {} wrote no snapshot in {} s (its main thread may be busy outside "
                                       "Python); it will be {}",
                                       pid, wait_seconds, pattern));
}

}  // namespace

extern const Command snapshot_command;
const Command snapshot_command{"snapshot", "ask a traced PyTorch process for a snapshot of its allocator",
                               snapshot_main};

}  // namespace gpumemtrace::cli
