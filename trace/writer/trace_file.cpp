#include "trace/writer/trace_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/output_pattern.h"

namespace gpumemtrace::writer {

namespace {

constexpr mode_t kTraceMode = 0600;

std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// What is at a path a trace could not be created at.
enum class Taken {
  Gone,           // nothing any more: try again
  Replaced,       // a left-over file, unlinked: try again
  Busy,           // a file a live process writes
  SymbolicLink,   // not followed
  NotRegular,     // a device, pipe, socket or directory
  Unreplaceable,  // a file this process cannot check or unlink (`error`)
};

Taken what_is_at(const std::string& path, int& error) {
  struct stat at {};
  if (lstat(path.c_str(), &at) != 0) {
    error = errno;
    return error == ENOENT ? Taken::Gone : Taken::Unreplaceable;
  }
  if (S_ISLNK(at.st_mode)) return Taken::SymbolicLink;
  if (!S_ISREG(at.st_mode)) return Taken::NotRegular;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = errno;
    return Taken::Unreplaceable;
  }
  // Its writer's lock is free: the process that wrote it has ended. The file is unlinked while this process
  // holds the lock and after checking it is still the one at the path, so two processes never both take the
  // same file for left over.
  Taken taken = Taken::Busy;
  struct stat opened {}, now {};
  if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &opened) == 0 && lstat(path.c_str(), &now) == 0 &&
      same_file(opened, now)) {
    taken = Taken::Replaced;
    if (unlink(path.c_str()) != 0) {
      error = errno;
      taken = Taken::Unreplaceable;
    }
  }
  ::close(fd);
  return taken;
}

std::string why_taken(const std::string& path, Taken taken, int error) {
  switch (taken) {
    case Taken::Busy: return path + " is being written by another process";
    case Taken::Unreplaceable: return path + " is there and cannot be replaced (" + std::strerror(error) + ")";
    default: return path + " is taken";
  }
}

}  // namespace

bool TraceFile::create(const std::string& path, std::span<const uint8_t> first_bytes) {
  close();
  asked_ = path;
  path_.clear();
  notice_.clear();
  error_.clear();
  // Unnamed, if the file system has O_TMPFILE and /proc can name it later (linkat needs /proc/self/fd).
  int fd = ::open(directory_of(path).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, kTraceMode);
  if (fd >= 0 && access(("/proc/self/fd/" + std::to_string(fd)).c_str(), F_OK) == 0) {
    fd_ = fd;
    named_ = false;
    flock(fd_, LOCK_EX | LOCK_NB);  // a new inode nobody else has: it cannot fail but for lack of locks
  } else {
    if (fd >= 0) ::close(fd);
    named_ = true;
    if (!place()) return false;
  }
  size_t done = 0;
  while (done < first_bytes.size()) {
    ssize_t n = pwrite(fd_, first_bytes.data() + done, first_bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = "cannot write " + (path_.empty() ? asked_ : path_) + ": " + std::strerror(n < 0 ? errno : ENOSPC);
      close();
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool TraceFile::name() {
  if (named_) return true;
  if (!place()) return false;
  named_ = true;
  int by_name = ::open(path_.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  struct stat opened {}, linked {};
  if (by_name >= 0 && fstat(by_name, &opened) == 0 && fstat(fd_, &linked) == 0 && same_file(opened, linked)) {
    lock_fd_ = fd_;  // kept open: its open file description holds the lock
    fd_ = by_name;
  } else if (by_name >= 0) {
    ::close(by_name);
  }
  return true;
}

void TraceFile::close() {
  for (int* fd : {&fd_, &lock_fd_}) {
    if (*fd >= 0) ::close(*fd);  // and with the last, the lock
    *fd = -1;
  }
}

int TraceFile::make_at(const std::string& candidate) {
  if (!named_) {
    std::string self = "/proc/self/fd/" + std::to_string(fd_);
    return linkat(AT_FDCWD, self.c_str(), AT_FDCWD, candidate.c_str(), AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
  }
  int fd = ::open(candidate.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kTraceMode);
  if (fd < 0) return errno;
  // Between its creation and this lock another process may have found the new file unlocked, taken it for
  // left over and replaced it: then it is not this file any more.
  struct stat opened {}, now {};
  if (flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &opened) != 0 || lstat(candidate.c_str(), &now) != 0 ||
      !same_file(opened, now)) {
    ::close(fd);
    return EEXIST;
  }
  fd_ = fd;
  return 0;
}

bool TraceFile::place() {
  std::string why;
  for (const std::string& candidate : trace_path_choices(asked_, getpid())) {
    for (int attempt = 0; attempt < 3; ++attempt) {  // a left-over file is replaced, then tried again
      int error = make_at(candidate);
      if (error == 0) {
        path_ = candidate;
        if (candidate != asked_) notice_ = (why.empty() ? asked_ + " is taken" : why) + ": this trace goes to " + candidate;
        return true;
      }
      if (error != EEXIST) {
        error_ = "cannot create " + candidate + ": " + std::strerror(error);
        close();
        return false;
      }
      Taken taken = what_is_at(candidate, error);
      if (taken == Taken::Gone || taken == Taken::Replaced) continue;
      if (candidate == asked_) {
        if (taken == Taken::NotRegular || taken == Taken::SymbolicLink) {
          error_ = taken == Taken::NotRegular ? asked_ + " is not a regular file: no trace is written over it"
                                              : asked_ + " is a symbolic link (not followed): no trace is written through it";
          close();
          return false;
        }
        why = why_taken(asked_, taken, error);
      }
      break;
    }
  }
  error_ = (why.empty() ? asked_ + " is taken" : why) + ", and so are the " + std::to_string(kTraceNameChoices) +
           " names after it";
  close();
  return false;
}

}  // namespace gpumemtrace::writer
