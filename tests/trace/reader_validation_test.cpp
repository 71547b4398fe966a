// The reader rejects foreign and damaged files with a reason and a byte offset, reports a cut tail as a
// truncated trace with every record before the cut, and never reads out of bounds (run under ASan).
#include <gtest/gtest.h>

#include <random>

#include "tests/support/decode_helpers.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using format::Token;
using trace::Status;

// An exact-size heap copy, so AddressSanitizer sees any read past the end.
std::vector<uint8_t> prefix(const std::vector<uint8_t>& bytes, size_t size) {
  return std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
}

std::string open_error(const std::vector<uint8_t>& bytes) {
  try {
    trace::Reader reader(bytes);
  } catch (const trace::OpenError& error) {
    return error.what();
  }
  return "opened";
}

// Reads to the end and returns the error, or "" when the trace is complete or truncated.
std::string read_error(const std::vector<uint8_t>& bytes) {
  Decoded d = decode_all(bytes);
  return d.reader->status() == Status::Corrupt ? d.reader->error() : "";
}

std::string corrupt_at(size_t offset, const std::string& what) {
  return "corrupt trace at byte offset " + std::to_string(offset) + ": " + what;
}

TEST(ReaderValidation, EmptyFileIsNotATrace) {
  EXPECT_EQ(open_error({}), "not a gpumemtrace trace (the file is empty)");
}

TEST(ReaderValidation, WrongMagicIsNotATrace) {
  EXPECT_EQ(open_error({'\x7f', 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), "not a gpumemtrace trace");
  EXPECT_EQ(open_error({'G', 'P', 'U'}), "not a gpumemtrace trace");
  EXPECT_EQ(open_error(std::vector<uint8_t>(4096, 0)), "not a gpumemtrace trace");
}

TEST(ReaderValidation, OtherVersionsAreNotSupported) {
  EXPECT_EQ(open_error(TraceBuilder(3).bytes()),
            "trace format version 3 is not supported (this build reads versions 1 and 2)");
  EXPECT_EQ(open_error(TraceBuilder(0x01000000).bytes()),
            "trace format version 16777216 is not supported (this build reads versions 1 and 2)");
  EXPECT_EQ(open_error(TraceBuilder(2).bytes()), "a packed trace (version 2) is read from a file, not from memory");
}

TEST(ReaderValidation, IncompleteHeader) {
  EXPECT_EQ(open_error(prefix(TraceBuilder().bytes(), 12)), "the trace header is incomplete (12 of 16 bytes)");
}

TEST(ReaderValidation, UnknownTokensAreCorrupt) {
  for (uint8_t token :
       {uint8_t{0x1a}, uint8_t{0x3f}, uint8_t{0x40 | 29}, uint8_t{0x7f}, uint8_t{0xc0}, uint8_t{0xff}}) {
    TraceBuilder b;
    b.alloc(Api::cudaMalloc, 0, 0x1000, 1, 0, 1);
    size_t offset = b.size();
    b.token(token).u(0).u(0).u(0).u(0).u(0).u(0);
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", token);
    EXPECT_EQ(read_error(b.bytes()), corrupt_at(offset, std::string("unknown token ") + hex));
  }
}

TEST(ReaderValidation, AllocTokenWithAFreeApiAndTheReverseAreCorrupt) {
  TraceBuilder alloc_of_free;
  alloc_of_free.token(0x40 | static_cast<uint8_t>(Api::cudaFree)).u(1).s(0).u(1).u(0).u(0);
  EXPECT_EQ(read_error(alloc_of_free.bytes()), corrupt_at(16, "unknown token 0x59"));
  TraceBuilder free_of_alloc;
  free_of_alloc.token(0x80 | static_cast<uint8_t>(Api::cudaMalloc)).s(0).u(0);
  EXPECT_EQ(read_error(free_of_alloc.bytes()), corrupt_at(16, "unknown token 0x8f"));
  TraceBuilder failed_with_free_api;
  failed_with_free_api.token(Token::AllocFailed).u(static_cast<uint64_t>(Api::cuMemFree)).u(1).u(1).u(0).u(1).u(0);
  EXPECT_EQ(read_error(failed_with_free_api.bytes()), corrupt_at(16, "failed allocation with unknown API 10"));
  TraceBuilder free_failed_beyond;
  free_failed_beyond.token(Token::FreeFailed).u(29).u(1).u(1).u(0);
  EXPECT_EQ(read_error(free_failed_beyond.bytes()), corrupt_at(16, "failed free with unknown API 29"));
}

TEST(ReaderValidation, VarintOverflowIsCorrupt) {
  TraceBuilder eleven_bytes;
  eleven_bytes.token(Token::Fork).raw({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  EXPECT_EQ(read_error(eleven_bytes.bytes()), corrupt_at(17, "a varint is longer than 64 bits"));
  TraceBuilder bit_64;
  bit_64.token(Token::Fork).raw({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02});
  EXPECT_EQ(read_error(bit_64.bytes()), corrupt_at(17, "a varint is longer than 64 bits"));
  TraceBuilder max;
  max.fork(~uint64_t{0});
  Decoded d = decode_all(max.bytes());
  ASSERT_EQ(d.records.size(), 1u);
  EXPECT_EQ(std::get<trace::Fork>(d.records[0]).child_pid, ~uint64_t{0});
}

TEST(ReaderValidation, StringLongerThanTheFileIsCorrupt) {
  TraceBuilder b;
  b.token(Token::ThreadNew).u(1).u(7).u(uint64_t{1} << 40).raw({'a', 'b'});
  EXPECT_EQ(read_error(b.bytes()), corrupt_at(19, "a string runs past the end of the file"));
}

TEST(ReaderValidation, StringCutByTheEndOfTheFileIsATruncatedTail) {
  TraceBuilder b;
  b.fork(1);
  b.thread_new(1, 7, "a thread name");
  Decoded d = decode_all(prefix(b.bytes(), b.size() - 4));
  EXPECT_EQ(d.reader->status(), Status::Truncated);
  EXPECT_EQ(d.reader->stop_offset(), 18u);
  EXPECT_EQ(d.records.size(), 1u);
}

TEST(ReaderValidation, UndefinedStackNodesAreCorrupt) {
  TraceBuilder alloc;
  alloc.stack_node(0, 1).stack_node(1, 2);
  alloc.alloc(Api::cudaMalloc, 0, 0x1000, 1, 3, 1);
  EXPECT_EQ(read_error(alloc.bytes()), corrupt_at(alloc.event_offset(), "alloc refers to undefined stack 3"));
  TraceBuilder parent;
  parent.stack_node(0, 1).stack_node(2, 2);
  EXPECT_EQ(read_error(parent.bytes()), corrupt_at(19, "stack node refers to undefined parent 2"));
  TraceBuilder failed;
  failed.alloc_failed(Api::cudaMalloc, 0, 1, 1, 1, 1);
  EXPECT_EQ(read_error(failed.bytes()),
            corrupt_at(failed.event_offset(), "failed allocation refers to undefined stack 1"));
}

// A stack holds at most the Process record's maximum depth, and one node more for a cut stack's marker. A
// deeper chain (a few hundred KB of trace make one 100,000 deep, and every stack on it cost its readers
// time and memory in its depth: seconds and gigabytes) is damage: the reader stops at its first node too deep.
TEST(ReaderValidation, StacksDeeperThanTheRecordedMaximumAreCorrupt) {
  TraceBuilder b;
  b.process(1, 0, 0, 4, -1, "host", "/bin/x", {"x"});
  for (uint64_t i = 0; i < 5; ++i) b.stack_node(i, 0x1000 + i);  // 4 frames and the marker's place
  b.alloc(Api::cudaMalloc, 0, 0x7000, 1, 5, 1);
  EXPECT_EQ(read_error(b.bytes()), "");
  size_t offset = b.size();
  for (uint64_t i = 5; i < 100000; ++i) b.stack_node(i, 0x1000 + i);
  Decoded d = decode_all(b.bytes());
  EXPECT_EQ(d.reader->error(), corrupt_at(offset, "stack node at depth 6, deeper than the trace's maximum stack depth 4"));
  EXPECT_EQ(d.reader->stacks().size(), 5u) << "read no further";

  // No maximum recorded (0: no stacks were captured, or a trace made of a PyTorch snapshot): not bounded here.
  TraceBuilder unbounded;
  unbounded.process(1, 0, 0, 0, -1, "host", "/bin/x", {"x"});
  for (uint64_t i = 0; i < 100; ++i) unbounded.stack_node(i, 0x1000 + i);
  EXPECT_EQ(read_error(unbounded.bytes()), "");
}

TEST(ReaderValidation, PythonFramesOfUndefinedCodesAndUnknownMarkersAreCorrupt) {
  TraceBuilder undefined;
  undefined.python_code("a.py", "f", 1).stack_node(0, format::python_frame(0, 3));
  size_t offset = undefined.size();
  undefined.stack_node(1, format::python_frame(1, 3));
  EXPECT_EQ(read_error(undefined.bytes()), corrupt_at(offset, "stack node refers to undefined Python code 1"));
  TraceBuilder marker;
  marker.stack_node(0, format::kTruncatedFrame | 2);
  EXPECT_EQ(read_error(marker.bytes()), corrupt_at(16, "stack node with unknown frame marker 0xc000000000000003"));
  TraceBuilder before;  // a code is defined only from its record on
  before.stack_node(0, format::python_frame(0, 3)).python_code("a.py", "f", 1);
  EXPECT_EQ(read_error(before.bytes()), corrupt_at(16, "stack node refers to undefined Python code 0"));
}

TEST(ReaderValidation, NamedFramesOfUndefinedFunctionsAreCorrupt) {
  TraceBuilder undefined;
  undefined.record(trace::NativeFunction{0, "f", "a.cpp"}).stack_node(0, format::named_frame(0, 3));
  size_t offset = undefined.size();
  undefined.stack_node(1, format::named_frame(1, 0));
  EXPECT_EQ(read_error(undefined.bytes()), corrupt_at(offset, "stack node refers to undefined native function 1"));
  TraceBuilder before;  // a function is defined only from its record on
  before.stack_node(0, format::named_frame(0, 3)).record(trace::NativeFunction{0, "f", "a.cpp"});
  EXPECT_EQ(read_error(before.bytes()), corrupt_at(16, "stack node refers to undefined native function 0"));
}

TEST(ReaderValidation, UndefinedThreadsAreCorrupt) {
  TraceBuilder unknown;
  unknown.thread_new(1, 10, "a").thread_switch(2);
  EXPECT_EQ(read_error(unknown.bytes()), corrupt_at(21, "switch to undefined thread 2"));
  TraceBuilder zero;
  zero.thread_switch(0);
  EXPECT_EQ(read_error(zero.bytes()), corrupt_at(16, "switch to undefined thread 0"));
  TraceBuilder out_of_order;
  out_of_order.thread_new(2, 10, "a");
  EXPECT_EQ(read_error(out_of_order.bytes()), corrupt_at(16, "new thread has index 2, expected 1"));
}

TEST(ReaderValidation, ThreadIndexesBeyond32BitsAreCorrupt) {
  TraceBuilder b;
  b.thread_new(1, 10, "a");
  b.token(Token::ThreadSwitch).u((uint64_t{1} << 32) + 1);
  EXPECT_EQ(read_error(b.bytes()), corrupt_at(21, "impossible index 4294967297"));
}

TEST(ReaderValidation, ZeroTokenEndsTheWrittenData) {
  TraceBuilder b;
  b.alloc(Api::cudaMalloc, 0, 0x1000, 1, 0, 1);
  size_t end = b.size();
  b.token(0).raw({0x12, 0xff, 0x33});
  Decoded d = decode_all(b.bytes());
  EXPECT_EQ(d.reader->status(), Status::Truncated);
  EXPECT_EQ(d.reader->stop_offset(), end);
  EXPECT_EQ(d.records.size(), 1u);
}

void expect_every_cut_keeps_the_records_before_it(const std::vector<uint8_t>& full_bytes) {
  Decoded full = decode_all(full_bytes);
  ASSERT_EQ(full.reader->status(), Status::Complete);

  for (size_t cut = 0; cut < full_bytes.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    std::vector<uint8_t> bytes = prefix(full_bytes, cut);
    if (cut < format::kHeaderSize) {
      EXPECT_NE(open_error(bytes), "opened");
      continue;
    }
    Decoded d = decode_all(bytes);
    size_t expected = 0;
    while (expected < full.ends.size() && full.ends[expected] <= cut) ++expected;
    ASSERT_EQ(d.reader->status(), Status::Truncated) << d.reader->error();
    ASSERT_EQ(d.records.size(), expected);
    for (size_t i = 0; i < expected; ++i) EXPECT_EQ(d.records[i], full.records[i]) << "record " << i;
    // Reading stops after the last whole record, or after Time/Device state records that follow it.
    EXPECT_GE(d.reader->stop_offset(), expected ? full.ends[expected - 1] : format::kHeaderSize);
    EXPECT_LE(d.reader->stop_offset(), expected < full.ends.size() ? full.ends[expected] - 1 : cut);
  }
}

TEST(ReaderValidation, TruncatedAtEveryOffsetKeepsEveryRecordBeforeTheCut) {
  expect_every_cut_keeps_the_records_before_it(every_record_trace().bytes());
  expect_every_cut_keeps_the_records_before_it(python_frames_trace().bytes());
}

// Damaged input ends one of three ways; the loop always terminates within the file.
void expect_survives(const std::vector<uint8_t>& bytes) {
  Decoded d = decode_all(bytes);
  EXPECT_NE(d.reader->status(), Status::Reading);
  EXPECT_LE(d.reader->records(), bytes.size());
  EXPECT_LE(d.reader->stop_offset(), bytes.size());
  EXPECT_EQ(d.reader->status() == Status::Corrupt, !d.reader->error().empty());
}

TEST(ReaderValidation, RandomGarbageAfterAValidHeaderNeverCrashes) {
  std::mt19937_64 random(12345);
  for (int round = 0; round < 3000; ++round) {
    TraceBuilder b;
    size_t length = random() % 600;
    bool plausible = round % 2;  // half of them use only known tokens' low values, to get deeper
    for (size_t i = 0; i < length; ++i) {
      uint8_t byte = static_cast<uint8_t>(random());
      if (plausible && random() % 3 == 0) byte &= 0x13;
      b.raw({byte});
    }
    SCOPED_TRACE("round " + std::to_string(round));
    expect_survives(b.bytes());
  }
}

void expect_every_bit_flip_survived(const std::vector<uint8_t>& original) {
  for (size_t byte = format::kHeaderSize; byte < original.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bytes = original;
      bytes[byte] ^= static_cast<uint8_t>(1 << bit);
      SCOPED_TRACE("byte " + std::to_string(byte) + " bit " + std::to_string(bit));
      expect_survives(bytes);
    }
  }
}

TEST(ReaderValidation, EveryBitFlipNeverCrashes) {
  expect_every_bit_flip_survived(every_record_trace().bytes());
  expect_every_bit_flip_survived(python_frames_trace().bytes());
}

TEST(ReaderValidation, DeviceIndexesAboveTheMaximumAreCorrupt) {
  TraceBuilder highest;
  highest.alloc(Api::cudaMalloc, trace::kMaxDevice, 0x7000, 1, 0, 0);
  EXPECT_EQ(read_error(highest.bytes()), "");
  TraceBuilder beyond;
  size_t offset = beyond.size();
  beyond.alloc(Api::cudaMalloc, trace::kMaxDevice + 1, 0x7000, 1, 0, 0);
  EXPECT_EQ(read_error(beyond.bytes()), corrupt_at(offset, "impossible device 4097"));
  TraceBuilder failed;
  failed.alloc_failed(Api::cudaMalloc, 1 << 30, 1, 0, 2, 0);
  EXPECT_EQ(read_error(failed.bytes()), corrupt_at(16, "impossible device 1073741825"));
}

TEST(ReaderValidation, SizesThatAddUpPast64BitsAreCorrupt) {
  constexpr uint64_t kHalf = uint64_t{1} << 63;
  TraceBuilder allocs;
  allocs.alloc(Api::cudaMalloc, 0, 0x7000, kHalf - 1, 0, 0).alloc(Api::cudaMalloc, 0, 0x8000, kHalf, 0, 0);
  EXPECT_EQ(read_error(allocs.bytes()), "");  // 2^64 - 1 in all
  allocs.alloc(Api::cudaMalloc, 0, 0x9000, 1, 0, 0);
  EXPECT_EQ(read_error(allocs.bytes()),
            corrupt_at(allocs.event_offset(), "alloc: the trace's sizes add up to more than 2^64 bytes"));
  TraceBuilder maps;
  maps.alloc(Api::cudaMalloc, 0, 0x7000, kHalf, 0, 0).mem_map(0x10000, kHalf, 0x7000, 0, 0);
  EXPECT_EQ(read_error(maps.bytes()),
            corrupt_at(maps.event_offset(), "mem-map: the trace's sizes add up to more than 2^64 bytes"));
}

}  // namespace
}  // namespace gpumemtrace::test
