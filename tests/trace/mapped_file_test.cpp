// A mapped trace read from start to end: the pages read are given back, and the file ahead is asked for.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "tests/support/temp_files.h"
#include "trace/reader/mapped_file.h"

namespace gpumemtrace::test {
namespace {

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// How many pages of [begin, begin + length) of a mapping are in the page cache (mincore).
size_t cached_pages(const uint8_t* begin, size_t length) {
  std::vector<unsigned char> in_core((length + page_size() - 1) / page_size());
  if (mincore(const_cast<uint8_t*>(begin), length, in_core.data()) != 0) return 0;
  size_t count = 0;
  for (unsigned char page : in_core) count += page & 1;
  return count;
}

// Drops a file's clean pages from the page cache.
void evict(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fdatasync(fd), 0);
  ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  ::close(fd);
}

// A file of a GB that is not in the page cache is read at the disk's pace unless the disk reads while the
// reading works: the file is asked for up to kReadAhead past what was released.
TEST(MappedFile, ReleasingWhatWasReadAsksForTheFileAhead) {
  ScratchDir dir;
  const size_t length = trace::MappedFile::kReadAhead * 2;
  std::string path = write_file(dir / "big.trace", std::vector<uint8_t>(length, 0x5A));
  evict(path);
  trace::MappedFile file(path);
  const uint8_t* data = file.bytes().data();
  // A file system that keeps every page in memory (tmpfs) cannot show it.
  if (cached_pages(data, length) * page_size() > length / 2) GTEST_SKIP() << "the file system keeps the file cached";

  const size_t read = size_t{1} << 20;
  volatile uint8_t sink = 0;
  for (size_t offset = 0; offset < read; offset += page_size()) sink = sink + data[offset];
  file.release_before(read);

  // The pages asked for come in the background; the last one's arrival is waited for, up to 20 s.
  const size_t ahead_pages = trace::MappedFile::kReadAhead / page_size();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (cached_pages(data + read, trace::MappedFile::kReadAhead) < ahead_pages &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(cached_pages(data + read, trace::MappedFile::kReadAhead), ahead_pages);
  // Nothing beyond: the whole file is not asked for at once.
  EXPECT_LT(cached_pages(data + read + trace::MappedFile::kReadAhead, page_size() * 1024), 1024u);
}

}  // namespace
}  // namespace gpumemtrace::test
