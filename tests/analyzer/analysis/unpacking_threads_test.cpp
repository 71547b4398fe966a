// A packed trace unpacked on its own thread while the first reading replays it (trace/reader/unpacking.h), for
// ThreadSanitizer (the tsan preset runs it): the report's replays are those of the plain trace, with the used
// view read alongside on a third thread, and a trace dropped while it is unpacked ends its thread.
#include <gtest/gtest.h>

#include <memory>

#include "analyzer/analysis/analysis.h"
#include "tests/analyzer/analysis/heaps_trace.h"
#include "tests/support/temp_files.h"
#include "trace/packed/pack.h"
#include "trace/reader/opened_trace.h"
#include "trace/reader/reader.h"

namespace gpumemtrace::test {
namespace {

void expect_same_accounts(const replay::Replay& a, const replay::Replay& b) {
  ASSERT_EQ(a.accounts().size(), b.accounts().size());
  for (replay::AccountId id = 0; id < a.accounts().size(); ++id) {
    EXPECT_EQ(a.accounts()[id].peak_bytes, b.accounts()[id].peak_bytes) << id;
    EXPECT_EQ(a.accounts()[id].peak_time_ns, b.accounts()[id].peak_time_ns) << id;
    EXPECT_EQ(a.accounts()[id].live_bytes, b.accounts()[id].live_bytes) << id;
    EXPECT_EQ(a.accounts()[id].allocations, b.accounts()[id].allocations) << id;
    EXPECT_EQ(a.accounts()[id].frees, b.accounts()[id].frees) << id;
  }
}

TEST(UnpackingThreads, APackedTraceReplaysAsThePlainOneWhileItIsUnpacked) {
  ScratchDir scratch;
  // 60000 segments with their heaps: 480 thousand records, unpacked in pieces of 1 MiB.
  TraceBuilder b = heaps_trace(60000, 0);
  std::string plain_path = write_file(scratch / "plain.trace", b.bytes());
  std::string packed_path = write_file(scratch / "packed.trace", b.bytes());
  packed::pack_file(packed_path, 1);
  analysis::Analysis plain = analysis::analyze(plain_path, {}, {}, {.used_view_alongside = true});
  analysis::Analysis packed = analysis::analyze(packed_path, {}, {}, {.used_view_alongside = true});
  EXPECT_TRUE(packed.trace.complete);
  EXPECT_EQ(packed.trace.events, plain.trace.events);
  EXPECT_EQ(packed.trace.file_size, b.size());
  expect_same_accounts(*packed.replay, *plain.replay);
  std::unique_ptr<replay::Replay> plain_used = analysis::take_used_alongside(plain);
  std::unique_ptr<replay::Replay> packed_used = analysis::take_used_alongside(packed);
  ASSERT_TRUE(plain_used);
  ASSERT_TRUE(packed_used);
  expect_same_accounts(*packed_used, *plain_used);
}

// A reading that stops early, then the trace closed while it is still being unpacked: the unpacking ends.
TEST(UnpackingThreads, ATraceDroppedWhileItIsUnpackedEndsItsThread) {
  ScratchDir scratch;
  std::string path = write_file(scratch / "packed.trace", heaps_trace(60000, 0).bytes());
  packed::pack_file(path, 1);
  for (int i = 0; i < 3; ++i) {
    auto opened = std::make_unique<trace::OpenedTrace>(path);
    trace::Reader reader(opened->map_as_it_comes());
    for (int k = 0; k < 1000; ++k) ASSERT_TRUE(reader.next());
    opened.reset();
  }
}

}  // namespace
}  // namespace gpumemtrace::test
