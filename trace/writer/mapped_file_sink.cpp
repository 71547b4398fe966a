#include "trace/writer/mapped_file_sink.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace gpumemtrace::writer {

namespace {
constexpr size_t kGrowStep = size_t{8} << 20;
// Address space only; nothing is committed. Where less can be had (RLIMIT_AS, `ulimit -v`, a sanitizer's
// layout), half as much, and so on down to the smallest: a shorter limit on the trace's size, never no trace.
constexpr size_t kLargestReservation = size_t{1} << 40;
constexpr size_t kSmallestReservation = size_t{256} << 20;

// Faults mapped pages in now, in one call, rather than one by one while records are written under the
// recorder's lock (older kernels refuse the advice; the pages then fault in as they are written).
void populate([[maybe_unused]] void* start, [[maybe_unused]] size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  madvise(start, bytes, MADV_POPULATE_WRITE);
#endif
}

std::string size_text(size_t bytes) {
  return bytes >= (size_t{1} << 30) ? std::to_string(bytes >> 30) + " GiB" : std::to_string(bytes >> 20) + " MiB";
}
}  // namespace

MappedFileSink::~MappedFileSink() { close(); }

bool MappedFileSink::open(const std::string& path, std::span<const uint8_t> first_bytes) {
  error_.clear();
  if (!file_.create(path, first_bytes)) {
    error_ = file_.error();
    return false;
  }
  void* base = MAP_FAILED;
  size_t reservation = kLargestReservation;
  for (; reservation >= kSmallestReservation; reservation /= 2) {
    base = mmap(nullptr, reservation, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base != MAP_FAILED) break;
  }
  if (base == MAP_FAILED) {
    error_ = std::string("cannot reserve address space for the trace: ") + std::strerror(errno);
    file_.close();
    return false;
  }
  base_ = static_cast<uint8_t*>(base);
  reserved_ = reservation;
  if (!grow(0)) {
    abandon();
    return false;
  }
  return true;
}

bool MappedFileSink::publish() {
  if (!base_) return false;
  int before = file_.fd();
  if (!file_.name()) {
    error_ = file_.error();
    abandon();
    return false;
  }
  // The file opened by its name: mapped again from it, over the same pages (the same file), so that
  // /proc/PID/maps shows the trace's name rather than the unnamed file's "(deleted)".
  if (file_.fd() != before && capacity_ > 0 &&
      mmap(base_, capacity_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, file_.fd(), 0) == MAP_FAILED) {
    error_ = std::string("cannot map the trace file: ") + std::strerror(errno);
    abandon();
    return false;
  }
  if (file_.fd() != before) populate(base_ + released_, capacity_ - released_);
  return true;
}

bool MappedFileSink::grow(size_t bytes) {
  if (!base_) return false;
  failed_ = true;  // until this growth succeeds
  size_t wanted = size_ + bytes;
  size_t new_capacity = capacity_;
  while (new_capacity < wanted || new_capacity == capacity_) new_capacity += kGrowStep;
  if (new_capacity > reserved_) {
    error_ = "trace reached the size limit of " + size_text(reserved_) + " (the address space it could reserve)";
    return false;
  }
  // Extending a file past the process's file size limit raises SIGXFSZ, which kills the program by default:
  // the limit is a full disk for the trace, never a signal.
  rlimit file_size{};
  if (getrlimit(RLIMIT_FSIZE, &file_size) == 0 && file_size.rlim_cur != RLIM_INFINITY &&
      new_capacity > file_size.rlim_cur) {
    error_ = "the process's file size limit (RLIMIT_FSIZE) is " + std::to_string(file_size.rlim_cur) + " bytes";
    return false;
  }
  int rc = posix_fallocate(file_.fd(), static_cast<off_t>(capacity_), static_cast<off_t>(new_capacity - capacity_));
  if (rc != 0) {
    error_ = std::string("cannot extend the trace file: ") + std::strerror(rc);
    return false;
  }
  void* mapped = mmap(base_ + capacity_, new_capacity - capacity_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                      file_.fd(), static_cast<off_t>(capacity_));
  if (mapped == MAP_FAILED) {
    error_ = std::string("cannot map the trace file: ") + std::strerror(errno);
    return false;
  }
  populate(mapped, new_capacity - capacity_);
  capacity_ = new_capacity;
  failed_ = false;
  release_written();
  return true;
}

void MappedFileSink::release_written() {
  // Records are only appended: the steps before the one being written are never touched again. Unmapping
  // them from the process keeps its resident set (RssFile) from growing with the trace; the pages stay in
  // the page cache, dirty until the kernel writes them back, so a SIGKILL still loses nothing.
  size_t done = size_ / kGrowStep * kGrowStep;
  if (done <= released_) return;
  madvise(base_ + released_, done - released_, MADV_DONTNEED);
  released_ = done;
}

void MappedFileSink::sync() {
  if (base_ && size_) msync(base_, size_, MS_SYNC);
}

void MappedFileSink::close() {
  if (!base_) return;
  if (ftruncate(file_.fd(), static_cast<off_t>(size_)) != 0) {
    // The tail stays zero-filled; readers treat zeros as the end of the data.
  }
  abandon();
}

void MappedFileSink::abandon() {
  if (base_) munmap(base_, reserved_);
  file_.close();
  base_ = nullptr;
  reserved_ = capacity_ = size_ = released_ = 0;
  failed_ = false;
}

}  // namespace gpumemtrace::writer
