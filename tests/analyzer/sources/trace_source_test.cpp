// A path opened as a source (analyzer/sources/trace_source.h): a PyTorch snapshot tells how far its reading and
// its conversion into a trace are, so that a long one shows progress (cli/progress.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyzer/sources/trace_source.h"
#include "tests/analyzer/pytorch/python_pickle.h"
#include "tests/support/temp_files.h"

namespace gpumemtrace::test {
namespace {

struct Told {
  std::string doing;
  uint64_t done = 0;
  uint64_t total = 0;
};

// 70,000 allocations: Python's pickler appends them 1,000 at a time, and the conversion tells every 65,536
// and at its end.
TEST(TraceSource, ASnapshotTellsHowFarItsReadingAndConversionAre) {
  ScratchDir scratch;
  std::string path = write_file(
      scratch / "long.pickle",
      python_pickle("v = {'segments': [], 'device_traces': [[{'action': 'alloc', 'addr': 512 * i, 'size': 512, "
                    "'stream': 0, 'time_us': 1000 + i} for i in range(70000)]]}",
                    4));
  uint64_t size = std::filesystem::file_size(path);
  std::vector<Told> told;
  sources::TraceSource source(path, [&](std::string_view doing, uint64_t done, uint64_t total) {
    told.push_back({std::string(doing), done, total});
  });
  ASSERT_TRUE(source.snapshot().has_value());
  EXPECT_EQ(source.snapshot()->history_entries, 70000u);

  std::vector<Told> reading, converting;
  for (const Told& t : told) (t.doing == "reading" ? reading : converting).push_back(t);
  ASSERT_EQ(reading.size(), 70u) << "once after each batch of entries";
  EXPECT_TRUE(std::is_sorted(reading.begin(), reading.end(), [](const Told& a, const Told& b) { return a.done < b.done; }));
  for (const Told& t : reading) EXPECT_EQ(t.total, size);
  EXPECT_GT(reading.back().done, size * 9 / 10);
  EXPECT_LT(reading.back().done, size);
  ASSERT_EQ(converting.size(), 2u);
  EXPECT_EQ(converting[0].doing, "converting");
  EXPECT_EQ(converting[0].done, 65536u);
  EXPECT_EQ(converting[0].total, 70000u);
  EXPECT_EQ(converting[1].done, 70000u) << "all of it, at the end: the line goes";
  EXPECT_EQ(converting[1].total, 70000u);
  EXPECT_EQ(told.back().doing, "converting") << "the conversion comes after the reading";
}

}  // namespace
}  // namespace gpumemtrace::test
