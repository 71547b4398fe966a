#include "trace/reader/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "trace/reader/open_error.h"
#include "trace/reader/unpacking.h"

namespace gpumemtrace::trace {

namespace {
[[noreturn]] void fail(const char* what, int error) {
  throw OpenError(std::string(what) + ": " + std::strerror(error));
}
}  // namespace

MappedFile::MappedFile(const std::string& path, Links links) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (links == Links::NotFollowed ? O_NOFOLLOW : 0));
  if (fd < 0 && errno == ELOOP && links == Links::NotFollowed) throw OpenError("a symbolic link (not followed)");
  if (fd < 0) fail("cannot open", errno);
  try {
    map(fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

MappedFile::MappedFile(int descriptor) { map(descriptor); }

MappedFile::MappedFile(std::shared_ptr<Unpacking> unpacking) : unpacking_(std::move(unpacking)) {
  mapped_ = static_cast<size_t>(unpacking_->bound());
  // Read-only and shared: reserving the bound takes address space, not memory. Pages past the end of the file
  // are never touched: a reading stays within the bytes unpacked.
  void* data = mmap(nullptr, mapped_, PROT_READ, MAP_SHARED | MAP_NORESERVE, unpacking_->descriptor(), 0);
  if (data == MAP_FAILED) fail("cannot map the unpacked trace", errno);
  data_ = static_cast<const uint8_t*>(data);
  madvise(data, mapped_, MADV_SEQUENTIAL);
  try {
    size_ = static_cast<size_t>(unpacking_->wait_beyond(0));
  } catch (...) {
    munmap(data, mapped_);
    throw;
  }
}

std::span<const uint8_t> MappedFile::wait_longer() {
  if (may_grow()) {
    size_t longer = static_cast<size_t>(unpacking_->wait_beyond(size_));
    whole_ = longer == size_;  // it returned without growing: the unpacking has ended
    size_ = longer;
  }
  return bytes();
}

uint64_t MappedFile::expected_size() const {
  return may_grow() ? std::max<uint64_t>(size_, unpacking_->expected_size()) : size_;
}

void MappedFile::map(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) fail("cannot read", errno);
  if (!S_ISREG(st.st_mode)) throw OpenError(S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
  size_ = mapped_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* data = mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (data == MAP_FAILED) fail("cannot map", errno);
    madvise(data, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const uint8_t*>(data);
  }
}

void MappedFile::release_before(size_t offset) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t end = std::min(offset, size_) / page * page;
  if (!data_ || end <= released_) return;
  release({data_ + released_, end - released_});
  released_ = end;
  // A file not in the page cache (a snapshot of a GB, read once) is asked for well ahead of the reading, so
  // that the disk reads while the reading works: MADV_SEQUENTIAL's readahead alone made the reading wait.
  // The kernel reads at most its readahead window per request (128 KiB by default), hence the pieces. A file
  // being unpacked is read right behind its writing.
  constexpr size_t kPiece = size_t{128} << 10;
  if (!unpacking_ && end + kReadAhead / 2 > read_ahead_ && read_ahead_ < size_) {
    size_t to = std::min(size_, end + kReadAhead);
    for (size_t from = std::max(read_ahead_, end); from < to; from += kPiece)
      madvise(const_cast<uint8_t*>(data_) + from, std::min(kPiece, to - from), MADV_WILLNEED);
    read_ahead_ = to;
  }
}

void MappedFile::release(std::span<const uint8_t> part) {
  uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(part.data()) + page - 1) / page * page;
  uintptr_t end = (reinterpret_cast<uintptr_t>(part.data()) + part.size()) / page * page;
  if (!data_ || part.data() < data_ || part.data() + part.size() > data_ + size_ || end <= begin) return;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) munmap(const_cast<uint8_t*>(data_), mapped_);
}

}  // namespace gpumemtrace::trace
