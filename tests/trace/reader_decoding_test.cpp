// The reader decodes each record exactly: absolute times and addresses, threads, stacks, modules.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "tests/support/decode_helpers.h"
#include "tests/support/temp_files.h"
#include "trace/reader/field_cursor.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using format::Token;
using trace::Status;

// A varint reads the same whether the data ends right after it (each byte checked against the end) or has room
// for the longest one after it (FieldCursor's path without those checks); so does a varint too long.
TEST(ReaderDecoding, VarintsReadTheSameWithAndWithoutRoomAfterThem) {
  std::vector<uint64_t> values = {0, 1, 127, 128, 300, ~uint64_t{0}, uint64_t{1} << 63};
  for (unsigned bits = 7; bits < 64; bits += 7) {
    values.push_back((uint64_t{1} << bits) - 1);
    values.push_back(uint64_t{1} << bits);
  }
  for (uint64_t value : values) {
    for (size_t room : {size_t{0}, format::kMaxVarintBytes}) {
      std::vector<uint8_t> bytes(format::kMaxVarintBytes + room, 0xAA);
      size_t length = static_cast<size_t>(format::put_varint(bytes.data(), value) - bytes.data());
      bytes.resize(length + room);
      trace::FieldCursor cursor(bytes.data(), bytes.data() + bytes.size());
      EXPECT_EQ(cursor.u(), value) << value << ", room " << room;
      EXPECT_EQ(cursor.position(), bytes.data() + length) << value;
      EXPECT_EQ(cursor.failure(), trace::FieldCursor::Failure::None) << value;
      if (length == 1) continue;
      trace::FieldCursor cut(bytes.data(), bytes.data() + length - 1);  // the last byte missing
      EXPECT_EQ(cut.u(), 0u);
      EXPECT_EQ(cut.failure(), trace::FieldCursor::Failure::EndOfData) << value;
    }
  }
  for (size_t room : {size_t{0}, format::kMaxVarintBytes}) {
    std::vector<uint8_t> too_long(format::kMaxVarintBytes - 1, 0x80);
    too_long.push_back(0x02);  // a 10th byte with more than bit 63
    too_long.resize(too_long.size() + room, 0);
    trace::FieldCursor cursor(too_long.data(), too_long.data() + too_long.size());
    EXPECT_EQ(cursor.u(), 0u);
    EXPECT_EQ(cursor.failure(), trace::FieldCursor::Failure::VarintOverflow) << "room " << room;
    EXPECT_EQ(cursor.failure_position(), too_long.data());
  }
}

TEST(ReaderDecoding, HeaderOnlyIsAnEmptyTruncatedTrace) {
  TraceBuilder b;
  trace::Reader reader(b.bytes());
  EXPECT_EQ(reader.next(), nullptr);
  EXPECT_EQ(reader.status(), Status::Truncated);
  EXPECT_EQ(reader.stop_offset(), format::kHeaderSize);
  EXPECT_EQ(reader.records(), 0u);
  EXPECT_EQ(reader.next(), nullptr);
}

TEST(ReaderDecoding, Process) {
  TraceBuilder b;
  b.process(4242, 1, 1'700'000'000'123'456'789, 64, -1, "node7", "/usr/bin/python3", {"python3", "train.py"});
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.records.size(), 1u);
  const auto& p = as<trace::Process>(d.records[0]);
  EXPECT_EQ(p.pid, 4242u);
  EXPECT_EQ(p.ppid, 1u);
  EXPECT_EQ(p.start_wall_ns, 1'700'000'000'123'456'789u);
  EXPECT_EQ(p.max_stack_depth, 64u);
  EXPECT_EQ(p.rank, -1);
  EXPECT_EQ(p.hostname, "node7");
  EXPECT_EQ(p.executable, "/usr/bin/python3");
  ASSERT_EQ(p.argv.size(), 2u);
  EXPECT_EQ(p.argv[0], "python3");
  EXPECT_EQ(p.argv[1], "train.py");
  ASSERT_NE(d.reader->process(), nullptr);
  EXPECT_EQ(*d.reader->process(), p);
  EXPECT_EQ(d.reader->events(), 0u);
}

TEST(ReaderDecoding, AllocAndFreeAccumulateAddressesAndTimes) {
  TraceBuilder b;
  b.alloc(Api::cudaMalloc, 0, 0x7f0000000000, 1 << 20, 0, 1000);
  b.alloc(Api::cuMemAlloc, 2, 0x7f0000100000, 300, 0, 500);
  b.free(Api::cudaFree, 0x7f0000000000, 250);
  b.mem_info(0, 10, 20, 50);
  b.alloc(Api::cudaMalloc, 0, 0x10, ~uint64_t{0} >> 1, 0, 0);  // the largest size the sum of sizes leaves room for
  b.free(Api::cuMemFree, 0xffffffffffffff00, 1);
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.records.size(), 6u);

  trace::Alloc first;
  first.time_ns = 1000;
  first.api = Api::cudaMalloc;
  first.device = 0;
  first.address = 0x7f0000000000;
  first.size = 1 << 20;
  EXPECT_EQ(as<trace::Alloc>(d.records[0]), first);
  EXPECT_EQ(as<trace::Alloc>(d.records[0]).kind(), format::MemoryKind::Device);

  const auto& second = as<trace::Alloc>(d.records[1]);
  EXPECT_EQ(second.address, 0x7f0000100000u);
  EXPECT_EQ(second.device, 2);
  EXPECT_EQ(second.size, 300u);
  EXPECT_EQ(second.time_ns, 1500u);

  const auto& free = as<trace::Free>(d.records[2]);
  EXPECT_EQ(free.address, 0x7f0000000000u);
  EXPECT_EQ(free.api, Api::cudaFree);
  EXPECT_EQ(free.time_ns, 1750u);

  EXPECT_EQ(as<trace::MemInfo>(d.records[3]).time_ns, 1800u);
  EXPECT_EQ(as<trace::Alloc>(d.records[4]).address, 0x10u);
  EXPECT_EQ(as<trace::Alloc>(d.records[4]).size, ~uint64_t{0} >> 1);
  EXPECT_EQ(as<trace::Alloc>(d.records[4]).time_ns, 1800u);
  EXPECT_EQ(as<trace::Free>(d.records[5]).address, 0xffffffffffffff00u);
  EXPECT_EQ(d.reader->time_ns(), 1801u);
  EXPECT_EQ(d.reader->events(), 6u);
  EXPECT_EQ(d.reader->status(), Status::Truncated);
}

TEST(ReaderDecoding, AsyncAllocationsCarryStreamAndPool) {
  TraceBuilder b;
  b.alloc(Api::cudaMallocAsync, 0, 0x1000, 64, 0, 1, 0xabc);
  b.alloc(Api::cuMemAllocFromPoolAsync, 1, 0x2000, 128, 0, 1, 0xdef, 0x77);
  b.free(Api::cudaFreeAsync, 0x1000, 1, 0xabc);
  b.alloc(Api::cudaMalloc, 0, 0x3000, 8, 0, 1);
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.records.size(), 4u);
  const auto& async = as<trace::Alloc>(d.records[0]);
  EXPECT_EQ(async.stream, 0xabcu);
  EXPECT_EQ(async.pool, 0u);
  EXPECT_EQ(async.kind(), format::MemoryKind::AsyncPool);
  const auto& from_pool = as<trace::Alloc>(d.records[1]);
  EXPECT_EQ(from_pool.stream, 0xdefu);
  EXPECT_EQ(from_pool.pool, 0x77u);
  EXPECT_EQ(from_pool.address, 0x2000u);
  const auto& free = as<trace::Free>(d.records[2]);
  EXPECT_EQ(free.stream, 0xabcu);
  EXPECT_EQ(free.address, 0x1000u);
  EXPECT_EQ(as<trace::Alloc>(d.records[3]).address, 0x3000u);
}

TEST(ReaderDecoding, HostAllocationHasNoDevice) {
  TraceBuilder b;
  b.alloc(Api::cudaMallocHost, -1, 0x1000, 64, 0, 1);
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.records.size(), 1u);
  EXPECT_EQ(as<trace::Alloc>(d.records[0]).device, trace::kNoDevice);
  EXPECT_EQ(as<trace::Alloc>(d.records[0]).kind(), format::MemoryKind::HostPinned);
}

TEST(ReaderDecoding, ThreadsFollowNewAndSwitchRecords) {
  TraceBuilder b;
  b.alloc(Api::cudaMalloc, 0, 0x1000, 1, 0, 1);
  b.thread_new(1, 100, "main");
  b.alloc(Api::cudaMalloc, 0, 0x2000, 1, 0, 1);
  b.thread_new(2, 101, "loader");
  b.alloc(Api::cudaMalloc, 0, 0x3000, 1, 0, 1);
  b.thread_switch(1);
  b.free(Api::cudaFree, 0x1000, 1);
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.records.size(), 7u);
  EXPECT_EQ(as<trace::Alloc>(d.records[0]).thread, 0u);
  EXPECT_EQ(as<trace::ThreadNew>(d.records[1]), (trace::ThreadNew{1, 100, "main"}));
  EXPECT_EQ(as<trace::Alloc>(d.records[2]).thread, 1u);
  EXPECT_EQ(as<trace::Alloc>(d.records[4]).thread, 2u);
  EXPECT_EQ(as<trace::ThreadSwitch>(d.records[5]).index, 1u);
  EXPECT_EQ(as<trace::Free>(d.records[6]).thread, 1u);
  const trace::ThreadTable& threads = d.reader->threads();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[1].tid, 100u);
  EXPECT_EQ(threads[1].name, "main");
  EXPECT_EQ(threads[2].tid, 101u);
  EXPECT_EQ(threads[2].name, "loader");
  EXPECT_FALSE(threads.contains(0));
  EXPECT_FALSE(threads.contains(3));
}

TEST(ReaderDecoding, StackTrieHasParentsAndIps) {
  TraceBuilder b;
  b.stack_node(0, 0x1000).stack_node(1, 0x2000).stack_node(2, 0x3000).stack_node(1, 0x4000);
  b.alloc(Api::cudaMalloc, 0, 0x1, 1, 3, 1);
  b.alloc(Api::cudaMalloc, 0, 0x2, 1, 4, 1);
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.records.size(), 6u);
  EXPECT_EQ(as<trace::StackNode>(d.records[0]), (trace::StackNode{1, 0, 0x1000}));
  EXPECT_EQ(as<trace::StackNode>(d.records[3]), (trace::StackNode{4, 1, 0x4000}));
  const trace::StackTrie& stacks = d.reader->stacks();
  EXPECT_EQ(stacks.size(), 4u);
  EXPECT_EQ(stacks.node(3).parent, 2u);
  EXPECT_EQ(stacks.node(3).ip, 0x3000u);
  EXPECT_EQ(stacks.frames(as<trace::Alloc>(d.records[4]).stack), (std::vector<uint64_t>{0x3000, 0x2000, 0x1000}));
  EXPECT_EQ(stacks.frames(as<trace::Alloc>(d.records[5]).stack), (std::vector<uint64_t>{0x4000, 0x1000}));
  EXPECT_TRUE(stacks.frames(0).empty());
}

TEST(ReaderDecoding, StacksResetTakesEffectAfterTheResetRecord) {
  TraceBuilder b;
  b.stack_node(0, 0x1000).stack_node(1, 0x2000);
  b.stacks_reset();
  b.stack_node(0, 0x9000);
  b.alloc(Api::cudaMalloc, 0, 0x1, 1, 1, 1);
  trace::Reader reader(b.bytes());
  reader.next();
  reader.next();
  const trace::Record* reset = reader.next();
  ASSERT_TRUE(reset && std::holds_alternative<trace::StacksReset>(*reset));
  EXPECT_EQ(reader.stacks().size(), 2u);  // the old stacks can still be resolved here
  EXPECT_EQ(reader.stacks().generation(), 0u);
  const trace::Record* node = reader.next();
  ASSERT_TRUE(node);
  EXPECT_EQ(as<trace::StackNode>(*node), (trace::StackNode{1, 0, 0x9000}));
  EXPECT_EQ(reader.stacks().size(), 1u);
  EXPECT_EQ(reader.stacks().generation(), 1u);
  ASSERT_TRUE(reader.next());
  EXPECT_EQ(reader.stacks().frames(1), (std::vector<uint64_t>{0x9000}));
}

TEST(ReaderDecoding, StackIdsFromBeforeAResetAreUndefined) {
  TraceBuilder b;
  b.stack_node(0, 0x1000).stack_node(1, 0x2000);
  b.stacks_reset();
  b.stack_node(0, 0x9000);
  b.alloc(Api::cudaMalloc, 0, 0x1, 1, 2, 1);
  size_t bad = b.event_offset();
  Decoded d = decode_all(b.bytes());
  EXPECT_EQ(d.records.size(), 4u);
  EXPECT_EQ(d.reader->status(), Status::Corrupt);
  EXPECT_EQ(d.reader->error(),
            "corrupt trace at byte offset " + std::to_string(bad) + ": alloc refers to undefined stack 2");
}

TEST(ReaderDecoding, PythonFramesReferToTheCodeTableWhichOutlivesResets) {
  TraceBuilder b = python_frames_trace();
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.reader->status(), Status::Complete) << d.reader->error();
  EXPECT_EQ(as<trace::PythonCode>(d.records[1]), (trace::PythonCode{0, "/srv/train.py", "Trainer.step", 50}));
  EXPECT_EQ(as<trace::PythonCode>(d.records[2]).index, 1u);
  const std::vector<trace::PythonCodeInfo>& codes = d.reader->python_codes();
  ASSERT_EQ(codes.size(), 2u);
  EXPECT_EQ(codes[0].qualname, "Trainer.step");
  EXPECT_EQ(codes[1].qualname, "<module>");
  EXPECT_EQ(codes[1].first_line, 1u);

  uint64_t step = format::python_frame(0, 57);
  EXPECT_TRUE(format::is_python_frame(step));
  EXPECT_EQ(format::python_code_of(step), 0u);
  EXPECT_EQ(format::python_line_of(step), 57u);
  EXPECT_FALSE(format::is_python_frame(format::kTruncatedFrame));
  EXPECT_TRUE(format::is_tagged_frame(format::kTruncatedFrame));
  EXPECT_FALSE(format::is_tagged_frame(0x7fffffffffff));

  // The reset forgets the nodes, not the codes.
  const trace::Alloc& second = as<trace::Alloc>(d.records[11]);
  EXPECT_EQ(d.reader->stacks().frames(second.stack), (std::vector<uint64_t>{format::python_frame(0, 58)}));
}

// Innermost first: native, Python, native, Python, the marker of a cut stack.
TEST(ReaderDecoding, MixedStacksKeepTheirOrder) {
  TraceBuilder b = python_frames_trace();
  trace::Reader reader(b.bytes());
  const trace::Record* record = nullptr;
  while ((record = reader.next()) && !std::holds_alternative<trace::Alloc>(*record)) {
  }
  ASSERT_TRUE(record);
  EXPECT_EQ(reader.stacks().frames(std::get<trace::Alloc>(*record).stack),
            (std::vector<uint64_t>{0x7f0000001234, format::python_frame(0, 57), 0x401000, format::python_frame(1, 90),
                                   format::kTruncatedFrame}));
}

TEST(ReaderDecoding, ModuleSetAnswersLookupsAndIsReplacedByTheNextGeneration) {
  TraceBuilder b;
  b.modules_begin(1);
  b.module(0x7f0000000000, 0x7f0000001000, 0x7f0000090000, "/lib/libcuda.so.1", "\x01\x02");
  b.module(0, 0x400000, 0x480000, "/usr/bin/app", "");
  b.modules_begin(2);
  b.module(0, 0x400000, 0x480000, "/usr/bin/app", "");
  b.fork(77);
  trace::Reader reader(b.bytes());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reader.next());
  const trace::ModuleSet& modules = reader.modules();
  EXPECT_EQ(modules.generation(), 1u);
  ASSERT_EQ(modules.modules().size(), 2u);
  EXPECT_EQ(modules.modules()[0].path, "/usr/bin/app");  // sorted by address
  const trace::ModuleInfo* cuda = modules.find(0x7f0000001234);
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->path, "/lib/libcuda.so.1");
  EXPECT_EQ(cuda->base, 0x7f0000000000u);
  EXPECT_EQ(cuda->build_id, "\x01\x02");
  EXPECT_EQ(modules.find(0x7f0000001000), cuda);
  EXPECT_EQ(modules.find(0x7f0000090000), nullptr);  // high is exclusive
  EXPECT_EQ(modules.find(0x7f0000000fff), nullptr);
  EXPECT_EQ(modules.find(0x3fffff), nullptr);
  EXPECT_EQ(modules.find(0x400000)->path, "/usr/bin/app");

  const trace::Record* begin = reader.next();
  ASSERT_TRUE(begin);
  EXPECT_EQ(as<trace::ModulesBegin>(*begin).generation, 2u);
  EXPECT_EQ(modules.modules().size(), 2u);  // still the old set while the caller looks at ModulesBegin
  ASSERT_TRUE(reader.next());
  EXPECT_EQ(modules.generation(), 2u);
  ASSERT_EQ(modules.modules().size(), 1u);
  EXPECT_EQ(modules.find(0x7f0000001234), nullptr);
  EXPECT_EQ(as<trace::Fork>(*reader.next()).child_pid, 77u);
}

TEST(ReaderDecoding, FailedAllocationsCarryFreeAndTotalOnlyForOutOfMemory) {
  TraceBuilder b;
  b.stack_node(0, 0x1000);
  b.alloc_failed(Api::cudaMalloc, 1, uint64_t{80} << 30, 1, 2, 40, uint64_t{1} << 30, uint64_t{16} << 30);
  b.alloc_failed(Api::cuMemAllocManaged, 0, 0, 0, 1, 2);
  b.free_failed(Api::cuMemFree, 0xdead, 1, 3);
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.records.size(), 4u);
  trace::AllocFailed oom;
  oom.time_ns = 40;
  oom.api = Api::cudaMalloc;
  oom.device = 1;
  oom.size = uint64_t{80} << 30;
  oom.stack = 1;
  oom.error = 2;
  oom.device_free = uint64_t{1} << 30;
  oom.device_total = uint64_t{16} << 30;
  EXPECT_EQ(as<trace::AllocFailed>(d.records[1]), oom);
  trace::AllocFailed invalid;
  invalid.time_ns = 42;
  invalid.api = Api::cuMemAllocManaged;
  invalid.device = 0;
  invalid.error = 1;
  EXPECT_EQ(as<trace::AllocFailed>(d.records[2]), invalid);
  trace::FreeFailed free_failed;
  free_failed.time_ns = 45;
  free_failed.api = Api::cuMemFree;
  free_failed.address = 0xdead;
  free_failed.error = 1;
  EXPECT_EQ(as<trace::FreeFailed>(d.records[3]), free_failed);
  EXPECT_EQ(d.reader->events(), 3u);
}

TEST(ReaderDecoding, VmmPoolAndMemInfoRecords) {
  TraceBuilder b;
  b.mem_map(0x7f00, 4096, 9, 128, 1);
  b.range(Token::MemUnmap, 0x7f00, 4096, 1);
  b.range(Token::AddressReserve, 0x8000, 1 << 21, 1);
  b.range(Token::AddressFree, 0x8000, 1 << 21, 1);
  b.pool(Token::PoolCreate, 0x55, 3, 1);
  b.pool_trim(0x55, 100, 200, 50, 1);
  b.pool(Token::PoolDestroy, 0x55, -1, 1);
  b.mem_info(2, 1000, 4000, 1);
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.records.size(), 8u);
  const auto& map = as<trace::MemMap>(d.records[0]);
  EXPECT_EQ(map.address, 0x7f00u);
  EXPECT_EQ(map.size, 4096u);
  EXPECT_EQ(map.handle, 9u);
  EXPECT_EQ(map.offset, 128u);
  EXPECT_EQ(map.time_ns, 1u);
  EXPECT_EQ(as<trace::MemUnmap>(d.records[1]).address, 0x7f00u);
  EXPECT_EQ(as<trace::AddressReserve>(d.records[2]).size, uint64_t{1} << 21);
  EXPECT_EQ(as<trace::AddressFree>(d.records[3]).address, 0x8000u);
  EXPECT_EQ(as<trace::PoolCreate>(d.records[4]).pool, 0x55u);
  EXPECT_EQ(as<trace::PoolCreate>(d.records[4]).device, 3);
  const auto& trim = as<trace::PoolTrim>(d.records[5]);
  EXPECT_EQ(trim.min_bytes_to_keep, 100u);
  EXPECT_EQ(trim.reserved_after, 200u);
  EXPECT_EQ(trim.used_after, 50u);
  EXPECT_EQ(as<trace::PoolDestroy>(d.records[6]).device, trace::kNoDevice);
  const auto& info = as<trace::MemInfo>(d.records[7]);
  EXPECT_EQ(info.device, 2);
  EXPECT_EQ(info.free_bytes, 1000u);
  EXPECT_EQ(info.total_bytes, 4000u);
  EXPECT_EQ(info.time_ns, 8u);
}

TEST(ReaderDecoding, EndCompletesTheTraceAndNothingAfterItIsRead) {
  TraceBuilder b;
  b.alloc(Api::cudaMalloc, 0, 0x1000, 1, 0, 5);
  b.end(1, 7);
  size_t end = b.size();
  b.token(0x3f);  // never looked at
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.records.size(), 2u);
  EXPECT_EQ(as<trace::End>(d.records[1]).events_written, 1u);
  EXPECT_EQ(as<trace::End>(d.records[1]).time_ns, 12u);
  EXPECT_EQ(d.reader->status(), Status::Complete);
  EXPECT_EQ(d.reader->stop_offset(), end);
  EXPECT_EQ(d.reader->records(), 2u);
  EXPECT_EQ(d.reader->events(), 1u);
  EXPECT_EQ(d.reader->next(), nullptr);
}

// Each record is encoded and decoded from its one declaration: what goes in comes out.
TEST(ReaderDecoding, EveryRecordTypeReadsBackAsWritten) {
  std::vector<trace::Record> records = one_record_of_each_type();
  std::set<size_t> types;
  for (const trace::Record& record : records) types.insert(record.index());
  EXPECT_EQ(types.size(), std::variant_size_v<trace::Record>);

  TraceBuilder b;
  for (const trace::Record& record : records) std::visit([&](const auto& r) { b.record(r); }, record);
  Decoded d = decode_all(b.bytes());
  EXPECT_EQ(d.reader->status(), Status::Complete) << d.reader->error();
  EXPECT_EQ(d.records, records);
}

TEST(ReaderDecoding, EveryRecordTraceDecodesCompletely) {
  TraceBuilder b = every_record_trace();
  Decoded d = decode_all(b.bytes());
  EXPECT_EQ(d.reader->status(), Status::Complete) << d.reader->error();
  EXPECT_EQ(d.reader->events(), as<trace::End>(d.records.back()).events_written);
  EXPECT_EQ(d.reader->stop_offset(), b.size());
}

TEST(ReaderDecoding, ReadsAMappedFileWithAPreallocatedZeroTail) {
  TraceBuilder b = every_record_trace();
  Decoded full = decode_all(b.bytes());
  // How the writer leaves a running process's trace: its data (here without the last free and End), then
  // zeros to the end of the space it has reserved.
  size_t written = full.ends[full.ends.size() - 3];
  std::vector<uint8_t> live(b.bytes().begin(), b.bytes().begin() + static_cast<std::ptrdiff_t>(written));
  ScratchDir dir;
  std::string path = write_file(dir / "live.trace", live, 8 << 20);
  trace::Reader reader(path);
  uint64_t records = 0;
  while (reader.next()) ++records;
  EXPECT_EQ(reader.status(), Status::Truncated);
  EXPECT_EQ(reader.stop_offset(), written);
  EXPECT_EQ(reader.file_size(), written + (8 << 20));
  EXPECT_EQ(records, full.records.size() - 2);
}

TEST(ReaderDecoding, ReadsACompleteFile) {
  TraceBuilder b = every_record_trace();
  ScratchDir dir;
  trace::Reader reader(write_file(dir / "complete.trace", b.bytes()));
  while (reader.next()) {
  }
  EXPECT_EQ(reader.status(), Status::Complete);
  EXPECT_EQ(reader.events(), 21u);
}

}  // namespace
}  // namespace gpumemtrace::test
