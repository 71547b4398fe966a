// Creating a trace's file. A trace is written through a shared mapping, so its file is created anew, never
// truncated or reused: another live process may map the file at that path (a forked child, a second run
// given the same -o, every process of `mem-%r.trace` without a rank), and truncating it would kill that
// process with SIGBUS. The writer holds an exclusive flock on its file while it writes:
//
// - a file at the path whose lock can be had is left over (its process ended or was killed): it is unlinked
//   and a new file created (a reader that has the old one open keeps it);
// - a locked file belongs to a live process: the trace takes the next of trace_path_choices, and notice()
//   says so in one line;
// - a symbolic link (it may be planted in a shared directory, or be /dev/stdout) is not followed, and a
//   device, pipe or socket is not written over: refused, the program runs untraced. A later choice
//   (PATH.PID) that is any of these is passed over.
//
// The file is created 0600 (it holds the command line and paths of the program), unnamed where the file
// system allows (O_TMPFILE): it gets its name only once its first records are in it, so a process killed at
// any moment leaves either no file or one that reads as a trace. Elsewhere it is named at once and its first
// bytes written before anything else.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gpumemtrace::writer {

class TraceFile {
 public:
  TraceFile() = default;
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  ~TraceFile() { close(); }

  // Creates the file for a trace asked to go to `path`, locked, with `first_bytes` written at its start.
  // False: error() says why.
  bool create(const std::string& path, std::span<const uint8_t> first_bytes);
  // Gives the file its name (nothing to do when it was named at creation). False: error() says why. An
  // unnamed file is opened again by its name: fd() changes, and a mapping of the old one should be made
  // again from the new (/proc/PID/maps names a mapping by the file it was made from, and `gpumemtrace
  // snapshot` finds a process's trace there).
  bool name();
  void close();

  int fd() const { return fd_; }
  // Where the file is once named: the path asked for or the next free choice.
  const std::string& path() const { return path_; }
  // Why the trace is not where it was asked to go, in one line; empty when it is.
  const std::string& notice() const { return notice_; }
  const std::string& error() const { return error_; }

 private:
  // Makes the file at `candidate`: 0, or errno (EEXIST when something is there).
  int make_at(const std::string& candidate);
  bool place();

  int fd_ = -1;
  int lock_fd_ = -1;  // the unnamed file's own descriptor, which holds the lock, once fd_ is opened by name
  bool named_ = false;
  std::string asked_;  // the path asked for
  std::string path_;
  std::string notice_;
  std::string error_;
};

}  // namespace gpumemtrace::writer
