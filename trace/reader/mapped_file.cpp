#include "trace/reader/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "trace/reader/open_error.h"

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

void MappedFile::map(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) fail("cannot read", errno);
  if (!S_ISREG(st.st_mode)) throw OpenError(S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* data = mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (data == MAP_FAILED) fail("cannot map", errno);
    madvise(data, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const uint8_t*>(data);
  }
}

void MappedFile::release_before(size_t offset) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t end = offset / page * page;
  if (!data_ || end <= released_) return;
  madvise(const_cast<uint8_t*>(data_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

MappedFile::~MappedFile() {
  if (data_) munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace gpumemtrace::trace
