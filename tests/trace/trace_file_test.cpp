// How a trace's file is made (trace/writer/trace_file.h), in one process: two TraceFiles hold their locks on
// their own open file descriptions, as two processes would.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/temp_files.h"
#include "trace/writer/trace_file.h"

namespace gpumemtrace::test {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const uint8_t kFirst[] = {'f', 'i', 'r', 's', 't'};
const uint8_t kSecond[] = {'s', 'e', 'c', 'o', 'n', 'd'};

TEST(TraceFile, NamedOnlyOnceAskedWithItsFirstBytes) {
  ScratchDir dir;
  writer::TraceFile file;
  ASSERT_TRUE(file.create(dir / "t.trace", kFirst)) << file.error();
  // Where the file system has O_TMPFILE, nothing is at the path before name().
  bool unnamed = !std::filesystem::exists(dir / "t.trace");
  ASSERT_TRUE(file.name()) << file.error();
  EXPECT_EQ(file.path(), dir / "t.trace");
  EXPECT_EQ(file.notice(), "");
  EXPECT_EQ(read_all(dir / "t.trace"), "first");
  struct stat st {};
  ASSERT_EQ(stat((dir / "t.trace").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  RecordProperty("unnamed_until_named", unnamed ? "yes" : "no");
}

TEST(TraceFile, AFileBeingWrittenIsNeverTouchedAndTheNextNameIsTaken) {
  ScratchDir dir;
  writer::TraceFile first, second;
  ASSERT_TRUE(first.create(dir / "t.trace", kFirst) && first.name()) << first.error();
  ASSERT_TRUE(second.create(dir / "t.trace", kSecond) && second.name()) << second.error();
  std::string moved = dir / ("t.trace." + std::to_string(getpid()));
  EXPECT_EQ(second.path(), moved);
  EXPECT_EQ(second.notice(), dir / "t.trace" + " is being written by another process: this trace goes to " + moved);
  EXPECT_EQ(read_all(dir / "t.trace"), "first");
  EXPECT_EQ(read_all(moved), "second");
}

TEST(TraceFile, AFileLeftOverIsReplaced) {
  ScratchDir dir;
  {
    writer::TraceFile ended;
    ASSERT_TRUE(ended.create(dir / "t.trace", kFirst) && ended.name()) << ended.error();
  }  // its lock is released: the process that wrote it has ended
  std::ifstream kept(dir / "t.trace");  // a reader that has the old file open keeps it
  writer::TraceFile again;
  ASSERT_TRUE(again.create(dir / "t.trace", kSecond) && again.name()) << again.error();
  EXPECT_EQ(again.path(), dir / "t.trace");
  EXPECT_EQ(again.notice(), "");
  EXPECT_EQ(read_all(dir / "t.trace"), "second");
  std::string old((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  EXPECT_EQ(old, "first");
}

TEST(TraceFile, ALinkOrADeviceAtThePathIsRefused) {
  ScratchDir dir;
  std::filesystem::create_symlink(dir / "elsewhere", dir / "link.trace");
  writer::TraceFile link;
  EXPECT_FALSE(link.create(dir / "link.trace", kFirst) && link.name());
  EXPECT_EQ(link.error(), dir / "link.trace" + " is a symbolic link (not followed): no trace is written through it");
  EXPECT_FALSE(std::filesystem::exists(dir / "elsewhere"));
  writer::TraceFile device;
  EXPECT_FALSE(device.create("/dev/null", kFirst) && device.name());
  EXPECT_EQ(device.error(), "/dev/null is not a regular file: no trace is written over it");
}

}  // namespace
}  // namespace gpumemtrace::test
