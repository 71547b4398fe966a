// The first commit's layout of version 1 (trace/legacy/first_layout.h): told apart from today's, rewritten in
// today's record for record, a cut one read up to the cut and a damaged one up to the damage. Its bytes are
// written here by hand from that commit's docs/trace-format.md; tests/data/traces holds a trace its tracer wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "tests/support/decode_helpers.h"
#include "tests/support/trace_builder.h"
#include "trace/legacy/first_layout.h"
#include "trace/reader/opened_trace.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using trace::Status;

// Records as the first layout writes them: the caller gives every field, time deltas included.
class FirstLayoutBytes {
 public:
  FirstLayoutBytes() : bytes_(format::kHeaderSize) { format::put_header(bytes_.data()); }
  FirstLayoutBytes& token(uint8_t t) {
    bytes_.push_back(t);
    return *this;
  }
  FirstLayoutBytes& u(uint64_t v) {
    uint8_t buffer[format::kMaxVarintBytes];
    bytes_.insert(bytes_.end(), buffer, format::put_varint(buffer, v));
    return *this;
  }
  FirstLayoutBytes& s(int64_t v) { return u(format::zigzag(v)); }
  FirstLayoutBytes& str(std::string_view text) {
    u(text.size());
    bytes_.insert(bytes_.end(), text.begin(), text.end());
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

uint8_t alloc_token(Api api) { return static_cast<uint8_t>(0x40 | static_cast<uint8_t>(api)); }
uint8_t free_token(Api api) { return static_cast<uint8_t>(0x80 | static_cast<uint8_t>(api)); }

// One of every record the first layout had, each event with its own time delta (the times, summed, are in
// the comments).
FirstLayoutBytes every_first_layout_record() {
  FirstLayoutBytes b;
  b.token(0x01).u(4242).u(1).u(1700000000000000000).u(64).s(-1).str("host").str("/bin/app").u(2).str("app").str("-v");
  b.token(0x02).u(1);
  b.token(0x03).u(0x400000).u(0x400000).u(0x480000).str("/bin/app").str("");
  b.token(0x06).u(1).u(4242).str("app");
  b.token(0x05).u(0).u(0x401000);
  b.token(0x05).u(1).u(0x402000);
  b.token(0x10).u(1).u(1000).u(4000).u(1000);                                     // MemInfo device 0 at 1000
  b.token(alloc_token(Api::cudaMalloc)).u(1).s(0x7f0000000000).u(4096).u(2).u(500);  // device 0 at 1500
  b.token(alloc_token(Api::cudaMallocAsync)).u(2).s(0x100000).u(512).u(1).u(200).u(0x5000);  // device 1 at 1700, stream
  b.token(alloc_token(Api::cudaMallocFromPoolAsync)).u(2).s(0x100000).u(512).u(1).u(0).u(0x5000).u(0x6000);
  b.token(0x08).u(static_cast<uint64_t>(Api::cudaMalloc)).u(1).u(1 << 30).u(2).u(2).u(100).u(300).u(4000);  // OOM at 1800
  b.token(0x08).u(static_cast<uint64_t>(Api::cuMemAlloc)).u(1).u(12).u(0).u(1).u(0);  // invalid value, no extras
  b.token(0x09).u(0x7e0000000000).u(2 << 20).u(77).u(0).u(10);
  b.token(0x0A).u(0x7e0000000000).u(2 << 20).u(10);
  b.token(0x0B).u(0x7d0000000000).u(4 << 20).u(10);
  b.token(0x0C).u(0x7d0000000000).u(4 << 20).u(10);
  b.token(0x0D).u(0x9000).u(1).u(10);
  b.token(0x0F).u(0x9000).u(0).u(1 << 20).u(512).u(10);
  b.token(0x0E).u(0x9000).u(1).u(10);
  b.token(0x04);  // StacksReset: sizes per stack start again
  b.token(0x05).u(0).u(0x403000);
  b.token(0x07).u(1);
  b.token(0x11).u(4343);
  b.token(free_token(Api::cudaFreeAsync)).s(0).u(30).u(0x5000);  // frees the pool block at 0x7f0000200000, 1900
  b.token(free_token(Api::cudaFree)).s(-0x200000).u(0);         // frees 0x7f0000000000
  b.token(0x13).u(static_cast<uint64_t>(Api::cudaFree)).u(0xdead).u(1).u(5);
  b.token(alloc_token(Api::cudaMalloc)).u(1).s(0x1000).u(4096).u(1).u(5);  // after the reset, stack 1: 4096 again
  b.token(0x12).u(17).u(95);  // End at 2005
  return b;
}

TEST(FirstLayout, EveryRecordReadsInTodaysLayout) {
  FirstLayoutBytes b = every_first_layout_record();
  ASSERT_TRUE(trace::is_first_layout(b.bytes()));
  std::vector<uint8_t> current = legacy::to_current_layout(b.bytes());
  EXPECT_FALSE(trace::is_first_layout(current));
  Decoded d = decode_all(current);
  ASSERT_EQ(d.reader->status(), Status::Complete) << d.reader->error();
  ASSERT_EQ(d.records.size(), 28u);
  EXPECT_EQ(d.reader->events(), 17u);

  const auto& process = as<trace::Process>(d.records[0]);
  EXPECT_EQ(process.pid, 4242u);
  EXPECT_EQ(process.executable, "/bin/app");
  EXPECT_EQ(as<trace::Module>(d.records[2]).path, "/bin/app");
  const auto& info = as<trace::MemInfo>(d.records[6]);
  EXPECT_EQ(info.time_ns, 1000u);
  EXPECT_EQ(info.device, 0);
  EXPECT_EQ(info.total_bytes, 4000u);

  const auto& first = as<trace::Alloc>(d.records[7]);
  EXPECT_EQ(first.time_ns, 1500u);
  EXPECT_EQ(first.device, 0);
  EXPECT_EQ(first.address, 0x7f0000000000u);
  EXPECT_EQ(first.size, 4096u);
  EXPECT_EQ(first.stack, 2u);
  EXPECT_EQ(first.thread, 1u);
  const auto& async = as<trace::Alloc>(d.records[8]);
  EXPECT_EQ(async.time_ns, 1700u);
  EXPECT_EQ(async.device, 1);
  EXPECT_EQ(async.address, 0x7f0000100000u);
  EXPECT_EQ(async.stream, 0x5000u);
  const auto& pooled = as<trace::Alloc>(d.records[9]);
  EXPECT_EQ(pooled.time_ns, 1700u);
  EXPECT_EQ(pooled.address, 0x7f0000200000u);
  EXPECT_EQ(pooled.size, 512u);
  EXPECT_EQ(pooled.pool, 0x6000u);

  const auto& oom = as<trace::AllocFailed>(d.records[10]);
  EXPECT_EQ(oom.time_ns, 1800u);
  EXPECT_EQ(oom.size, uint64_t{1} << 30);
  EXPECT_EQ(oom.error, 2u);
  EXPECT_EQ(oom.device_free, 300u);
  EXPECT_EQ(oom.device_total, 4000u);
  EXPECT_EQ(as<trace::AllocFailed>(d.records[11]).error, 1u);
  const auto& map = as<trace::MemMap>(d.records[12]);
  EXPECT_EQ(map.time_ns, 1810u);
  EXPECT_EQ(map.handle, 77u);
  EXPECT_EQ(as<trace::MemUnmap>(d.records[13]).time_ns, 1820u);
  EXPECT_EQ(as<trace::AddressReserve>(d.records[14]).size, 4u << 20);
  EXPECT_EQ(as<trace::AddressFree>(d.records[15]).time_ns, 1840u);
  EXPECT_EQ(as<trace::PoolCreate>(d.records[16]).pool, 0x9000u);
  const auto& trim = as<trace::PoolTrim>(d.records[17]);
  EXPECT_EQ(trim.reserved_after, 1u << 20);
  EXPECT_EQ(trim.used_after, 512u);
  EXPECT_EQ(as<trace::PoolDestroy>(d.records[18]).time_ns, 1870u);
  as<trace::StacksReset>(d.records[19]);
  as<trace::StackNode>(d.records[20]);
  as<trace::ThreadSwitch>(d.records[21]);
  EXPECT_EQ(as<trace::Fork>(d.records[22]).child_pid, 4343u);

  const auto& freed = as<trace::Free>(d.records[23]);
  EXPECT_EQ(freed.time_ns, 1900u);
  EXPECT_EQ(freed.address, 0x7f0000200000u);
  EXPECT_EQ(freed.stream, 0x5000u);
  EXPECT_EQ(as<trace::Free>(d.records[24]).address, 0x7f0000000000u);
  EXPECT_EQ(as<trace::FreeFailed>(d.records[25]).time_ns, 1905u);
  const auto& again = as<trace::Alloc>(d.records[26]);
  EXPECT_EQ(again.time_ns, 1910u);
  EXPECT_EQ(again.address, 0x7f0000001000u);
  EXPECT_EQ(again.size, 4096u);
  EXPECT_EQ(again.device, 0);
  const auto& end = as<trace::End>(d.records[27]);
  EXPECT_EQ(end.time_ns, 2005u);
  EXPECT_EQ(end.events_written, 17u);
}

TEST(FirstLayout, ACutTraceReadsUpToTheCut) {
  std::vector<uint8_t> cut = every_first_layout_record().bytes();
  cut.resize(cut.size() - 2);  // inside the End record
  ASSERT_TRUE(trace::is_first_layout(cut));
  Decoded d = decode_all(legacy::to_current_layout(cut));
  EXPECT_EQ(d.reader->status(), Status::Truncated);
  ASSERT_EQ(d.records.size(), 27u);
  EXPECT_EQ(as<trace::Alloc>(d.records[26]).address, 0x7f0000001000u);
}

TEST(FirstLayout, ADamagedTraceStopsAtTheDamageAsCorrupt) {
  std::vector<uint8_t> damaged = every_first_layout_record().bytes();
  // The first AllocFailed's token, after the pooled Alloc's, becomes one no layout has: what came before
  // reads, then the reading stops there.
  size_t at = 0;
  bool after_pooled = false;
  for (size_t i = format::kHeaderSize; i < damaged.size() && at == 0; ++i) {
    after_pooled = after_pooled || damaged[i] == alloc_token(Api::cudaMallocFromPoolAsync);
    if (after_pooled && damaged[i] == 0x08) at = i;
  }
  ASSERT_NE(at, 0u);
  damaged[at] = 0x3F;
  ASSERT_TRUE(trace::is_first_layout(damaged));
  Decoded d = decode_all(legacy::to_current_layout(damaged));
  EXPECT_EQ(d.reader->status(), Status::Corrupt);
  ASSERT_EQ(d.records.size(), 10u);
  EXPECT_EQ(as<trace::Alloc>(d.records[9]).pool, 0x6000u);
}

// An Alloc of a stack not defined yet is damage (fuzz_trace_reader found one of stack 2^28 that made the
// rewriting size a table of the size per stack by it).
TEST(FirstLayout, AnAllocOfAnUndefinedStackIsDamage) {
  FirstLayoutBytes b;
  b.token(0x01).u(1).u(0).u(0).u(64).s(-1).str("").str("/bin/app").u(0);
  b.token(0x05).u(0).u(0x401000);
  b.token(0x10).u(1).u(1000).u(4000).u(1000);
  b.token(alloc_token(Api::cudaMalloc)).u(1).s(0x7f0000000000).u(4096).u(1).u(10);
  size_t damaged_at = b.bytes().size();
  b.token(alloc_token(Api::cudaMalloc)).u(1).s(0x1000).u(4096).u(uint64_t{1} << 28).u(10);
  ASSERT_TRUE(trace::is_first_layout(b.bytes()));
  std::vector<uint8_t> current = legacy::to_current_layout(b.bytes());
  // The damaged record follows as it was written, not rewritten.
  std::vector<uint8_t> damaged(b.bytes().begin() + static_cast<ptrdiff_t>(damaged_at), b.bytes().end());
  ASSERT_GE(current.size(), damaged.size());
  EXPECT_TRUE(std::equal(damaged.begin(), damaged.end(), current.end() - static_cast<ptrdiff_t>(damaged.size())));
  Decoded d = decode_all(current);
  EXPECT_EQ(d.reader->status(), Status::Corrupt);
  ASSERT_EQ(d.records.size(), 4u);
  EXPECT_EQ(as<trace::Alloc>(d.records[3]).stack, 1u);
}

TEST(FirstLayout, TodaysTracesAreNotTakenForIt) {
  EXPECT_FALSE(trace::is_first_layout(every_record_trace().bytes()));
  // An event with no Time or Device record before it: a host-pinned allocation in the first microsecond.
  TraceBuilder host;
  host.process(7, 1, 0, 64, -1, "host", "/bin/app", {"app"});
  host.thread_new(1, 7, "app");
  host.stack_node(0, 0x401000);
  trace::Alloc pinned;
  pinned.api = Api::cudaMallocHost;
  pinned.address = 0x7e0000000000;
  pinned.size = 4096;
  pinned.stack = 1;
  host.record(pinned);
  EXPECT_FALSE(trace::is_first_layout(host.bytes()));
  EXPECT_EQ(decode_all(host.bytes()).records.size(), 4u);
}

}  // namespace
}  // namespace gpumemtrace::test
