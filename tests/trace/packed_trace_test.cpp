// Packed traces (trace/packed): a packed trace unpacks to the exact bytes it was made from, reads as the plain
// one did, is smaller by the amount its predictions save, and damage to it is an error, never a crash.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <tuple>
#include <utility>

#include "tests/support/decode_helpers.h"
#include "tests/support/packed_damage.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_files.h"
#include "trace/packed/container.h"
#include "trace/packed/pack.h"
#include "trace/packed/unpack.h"
#include "trace/packed/zstd_streams.h"
#include "trace/reader/open_error.h"
#include "trace/reader/opened_trace.h"

namespace gpumemtrace::test {
namespace {

using format::Api;
using trace::Status;

std::vector<uint8_t> pack_bytes(const std::vector<uint8_t>& plain, int level = packed::kDefaultLevel) {
  packed::PackStats stats;
  return packed::pack(plain, level, stats);
}

std::vector<uint8_t> bytes_of(const std::string& path) {
  std::string text = read_file(path);
  return {text.begin(), text.end()};
}

TraceBuilder one_of_each_type_trace() {
  TraceBuilder b;
  for (const trace::Record& record : one_record_of_each_type()) std::visit([&](const auto& r) { b.record(r); }, record);
  return b;
}

TEST(PackedTrace, EveryRecordTypeUnpacksToTheSameBytes) {
  for (const TraceBuilder& b :
       {one_of_each_type_trace(), every_record_trace(), python_frames_trace(), mixed_workload_trace(3000)}) {
    std::vector<uint8_t> packed = pack_bytes(b.bytes());
    ASSERT_TRUE(packed::is_packed(packed));
    EXPECT_EQ(packed::unpack(packed), b.bytes());
  }
}

TEST(PackedTrace, PackedFileReadsRecordForRecordAsThePlainOne) {
  ScratchDir dir;
  TraceBuilder b = one_of_each_type_trace();
  std::string path = write_file(dir / "every.trace", b.bytes());
  packed::PackStats stats = packed::pack_file(path, packed::kDefaultLevel);
  EXPECT_EQ(stats.plain_bytes, b.size());
  EXPECT_EQ(stats.packed_bytes, bytes_of(path).size());
  EXPECT_TRUE(stats.complete);
  EXPECT_TRUE(packed::is_packed(bytes_of(path)));

  Decoded plain = decode_all(b.bytes());
  trace::Reader reader(path);
  std::vector<trace::Record> records;
  std::vector<uint64_t> ends;
  while (const trace::Record* r = reader.next()) {
    records.push_back(*r);
    ends.push_back(reader.stop_offset());
  }
  EXPECT_EQ(reader.status(), Status::Complete) << reader.error();
  EXPECT_EQ(records, plain.records);
  EXPECT_EQ(ends, plain.ends);
  EXPECT_EQ(reader.events(), plain.reader->events());
  EXPECT_EQ(stats.events, plain.reader->events());
}

// The inodes of this process's mappings of unpacked traces (or of the files whose path has `named`), one per
// mapping.
std::vector<std::string> unpacked_copies_mapped(const std::string& named = "memfd:gpumemtrace-unpacked") {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> inodes;
  for (std::string line; std::getline(maps, line);) {
    if (line.find(named) == std::string::npos) continue;
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode;
    fields >> range >> perms >> offset >> device >> inode;
    inodes.push_back(inode);
  }
  return inodes;
}

// The resident kilobytes of this process's mappings of `path` (/proc/self/smaps), -1 when it has none.
long resident_kib_of_mappings(const std::string& path) {
  std::ifstream smaps("/proc/self/smaps");
  long total = -1;
  bool in_path = false;
  for (std::string line; std::getline(smaps, line);) {
    // A mapping's line starts with its range, "start-end", in hex; its fields' lines with a name and a colon.
    std::string first = line.substr(0, line.find(' '));
    bool header = first.find('-') != std::string::npos &&
                  first.find_first_not_of("0123456789abcdef-") == std::string::npos;
    if (header) {
      in_path = line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
      if (in_path && total < 0) total = 0;
    } else if (in_path && line.rfind("Rss:", 0) == 0) {
      total += std::stol(line.substr(4));
    }
  }
  return total;
}

// How many of this process's descriptors are unpacked traces' memory files.
int open_unpacked_copies() {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    auto target = std::filesystem::read_symlink(entry.path(), error);
    if (!error && target.string().find("memfd:gpumemtrace-unpacked") != std::string::npos) ++count;
  }
  return count;
}

// A report reads a trace several times (analysis/passes.h): a packed trace opened once is unpacked once, and
// every reading maps that copy, even after the OpenedTrace is gone.
TEST(PackedTrace, OneOpeningUnpacksOnceForEveryReading) {
  ScratchDir dir;
  TraceBuilder b = one_of_each_type_trace();
  std::string path = write_file(dir / "every.trace", b.bytes());
  packed::pack_file(path, packed::kDefaultLevel);
  Decoded plain = decode_all(b.bytes());
  auto file = std::make_unique<trace::OpenedTrace>(path);
  trace::Reader first(file->map());
  trace::Reader second(file->map());
  file.reset();
  std::vector<std::string> inodes = unpacked_copies_mapped();
  ASSERT_EQ(inodes.size(), 2u);
  EXPECT_EQ(inodes[0], inodes[1]);
  for (trace::Reader* reader : {&first, &second}) {
    std::vector<trace::Record> records;
    while (const trace::Record* r = reader->next()) records.push_back(*r);
    EXPECT_EQ(reader->status(), Status::Complete) << reader->error();
    EXPECT_EQ(records, plain.records);
  }
}

// zstd's frame of `bytes` at `level` with the packer's other parameters.
std::vector<uint8_t> zstd_frame(std::span<const uint8_t> bytes, int level, int window_log = packed::kPackedWindowLog) {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, window_log);
  ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1);
  std::vector<uint8_t> frame(ZSTD_compressBound(bytes.size()));
  frame.resize(ZSTD_compress2(context, frame.data(), frame.size(), bytes.data(), bytes.size()));
  ZSTD_freeCCtx(context);
  return frame;
}

// Whether a zstd frame decompresses with a window of 2^window_log bytes at most.
bool decompresses_within(std::span<const uint8_t> frame, int window_log) {
  ZSTD_DCtx* context = ZSTD_createDCtx();
  ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, window_log);
  std::vector<uint8_t> out(ZSTD_DStreamOutSize());
  ZSTD_inBuffer in{frame.data(), frame.size(), 0};
  size_t left = 1;
  while (left != 0 && !ZSTD_isError(left)) {
    ZSTD_outBuffer piece{out.data(), out.size(), 0};
    left = ZSTD_decompressStream(context, &piece, &in);
  }
  ZSTD_freeDCtx(context);
  return left == 0;
}

// The unpacker reads all 19 streams at once and holds a window for each: the packer's frames have windows of
// 2 MiB at most (kPackedWindowLog), a stream longer than that included.
TEST(PackedTrace, TheFramesWindowsAreTwoMiBAtMost) {
  std::vector<uint8_t> packed = pack_bytes(mixed_workload_trace(2300000).bytes(), 1);
  packed::Frames frames = packed::read_container(packed);
  std::span<const uint8_t> tokens = frames[static_cast<size_t>(packed::Stream::Tokens)];
  ASSERT_GT(ZSTD_getFrameContentSize(tokens.data(), tokens.size()), uint64_t{1} << packed::kPackedWindowLog);
  for (size_t i = 0; i < frames.size(); ++i) EXPECT_TRUE(decompresses_within(frames[i], packed::kPackedWindowLog)) << i;
}

// A stream takes the level asked for only where it codes the stream's first 64 KiB smaller than level 1: small
// values drawn at random (the high bytes of a live allocation's place) are smaller and far quicker at level 1,
// a repeating schedule with noise (whose repeats a deeper search finds) smaller at level 9.
TEST(PackedTrace, EachStreamTakesTheLevelThatCodesItsSampleSmaller) {
  std::mt19937 random(7);
  std::vector<uint8_t> small_values(1 << 20);
  for (uint8_t& value : small_values) value = static_cast<uint8_t>(random() % 16);
  std::string schedule;  // a schedule of 37 steps, each a little off, in decimal
  for (uint64_t i = 0; schedule.size() < (1 << 20); ++i) schedule += std::to_string(i % 37 * 13 + random() % 3) + " ";
  std::span<const uint8_t> counted(reinterpret_cast<const uint8_t*>(schedule.data()), schedule.size());

  ASSERT_LT(zstd_frame(small_values, 1).size(), zstd_frame(small_values, 9).size());
  ASSERT_LT(zstd_frame(counted, 9).size(), zstd_frame(counted, 1).size());
  packed::ZstdCompressor compressor(9);
  EXPECT_TRUE(compressor.frame(small_values) == zstd_frame(small_values, 1));
  EXPECT_TRUE(compressor.frame(counted) == zstd_frame(counted, 9));
  EXPECT_TRUE(compressor.frame(small_values) == zstd_frame(small_values, 1));  // the level is set for each frame
  packed::ZstdCompressor fastest(1);
  EXPECT_TRUE(fastest.frame(counted) == zstd_frame(counted, 1));
}

// Traces packed before the windows were 2 MiB had frames with windows of up to 8 MiB: they unpack as before.
TEST(PackedTrace, FramesWithTheEarlierEightMiBWindowsStillUnpack) {
  std::vector<uint8_t> plain = mixed_workload_trace(2300000).bytes();
  std::vector<uint8_t> packed = pack_bytes(plain, 1);
  packed::Frames frames = packed::read_container(packed);
  std::array<std::vector<uint8_t>, packed::kStreams> earlier;
  for (size_t i = 0; i < frames.size(); ++i) {
    std::vector<uint8_t> raw(ZSTD_getFrameContentSize(frames[i].data(), frames[i].size()));
    ASSERT_EQ(ZSTD_decompress(raw.data(), raw.size(), frames[i].data(), frames[i].size()), raw.size());
    earlier[i] = zstd_frame(raw, 1, packed::kWindowLog);
  }
  ASSERT_FALSE(decompresses_within(earlier[static_cast<size_t>(packed::Stream::Tokens)], packed::kPackedWindowLog));
  EXPECT_TRUE(packed::unpack(packed::write_container(earlier)) == plain);
}

// A trace dropped before its unpacking ends (its last reading is gone: a report stopped by an error, dump cut
// short) stops the unpacking at its next piece instead of unpacking the rest for nobody.
TEST(PackedTrace, DroppingATraceStopsItsUnpacking) {
  ScratchDir dir;
  TraceBuilder b = mixed_workload_trace(2000000);
  std::string path = write_file(dir / "long.trace", b.bytes());
  packed::pack_file(path, 1);
  int copy = -1;  // the memory file, opened again: it outlives the unpacking's descriptor
  {
    trace::OpenedTrace opened(path);
    std::unique_ptr<trace::MappedFile> first_piece = opened.map_as_it_comes();
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
      std::error_code error;
      auto target = std::filesystem::read_symlink(entry.path(), error);
      if (!error && target.string().find("memfd:gpumemtrace-unpacked") != std::string::npos)
        copy = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    }
    ASSERT_GE(copy, 0);
  }
  struct stat unpacked {};
  ASSERT_EQ(fstat(copy, &unpacked), 0);
  ::close(copy);
  EXPECT_GT(unpacked.st_size, 0);
  EXPECT_LT(static_cast<uint64_t>(unpacked.st_size), b.size() / 2) << "of " << b.size();
}

// A trace too long to unpack into memory is unpacked into a file without a name in $TMPDIR, whose pages the
// kernel can write out and take back; it reads as the plain trace, as it comes and whole.
TEST(PackedTrace, ALongPackedTraceIsUnpackedIntoAScratchFileOnDisk) {
  ScratchDir dir;
  ScratchDir scratch;
  TraceBuilder b = mixed_workload_trace(20000);
  std::string path = write_file(dir / "mixed.trace", b.bytes());
  packed::pack_file(path, 1);
  Decoded plain = decode_all(b.bytes());
  const char* tmpdir = std::getenv("TMPDIR");
  std::string saved = tmpdir ? tmpdir : "";
  setenv("TMPDIR", scratch.path().c_str(), 1);
  auto file = std::make_unique<trace::OpenedTrace>(path, /*unpacked_in_memory_at_most=*/0);
  tmpdir ? setenv("TMPDIR", saved.c_str(), 1) : unsetenv("TMPDIR");
  trace::Reader first(file->map_as_it_comes());
  trace::Reader second(file->map());
  file.reset();
  std::vector<std::string> inodes = unpacked_copies_mapped(scratch.path() + "/#");
  ASSERT_EQ(inodes.size(), 2u);
  EXPECT_EQ(inodes[0], inodes[1]);
  EXPECT_EQ(unpacked_copies_mapped().size(), 0u);
  EXPECT_TRUE(std::filesystem::is_empty(scratch.path()));  // nothing to remove, even after a crash
  for (trace::Reader* reader : {&first, &second}) {
    std::vector<trace::Record> records;
    while (const trace::Record* r = reader->next()) records.push_back(*r);
    EXPECT_EQ(reader->status(), Status::Complete) << reader->error();
    EXPECT_TRUE(records == plain.records);
  }
}

// A single reading (Reader(path)) keeps no descriptor of the unpacked copy open: only its mapping holds it.
TEST(PackedTrace, ASingleReadingHoldsTheUnpackedCopyByItsMappingAlone) {
  ScratchDir dir;
  TraceBuilder b = one_of_each_type_trace();
  std::string path = write_file(dir / "every.trace", b.bytes());
  packed::pack_file(path, packed::kDefaultLevel);
  {
    trace::Reader reader(path);
    EXPECT_EQ(unpacked_copies_mapped().size(), 1u);
    EXPECT_EQ(open_unpacked_copies(), 0);
    std::vector<trace::Record> records;  // their names point into the mapping: compared while it lives
    while (const trace::Record* r = reader.next()) records.push_back(*r);
    EXPECT_EQ(reader.status(), Status::Complete) << reader.error();
    EXPECT_EQ(records, decode_all(b.bytes()).records);
  }
  EXPECT_EQ(unpacked_copies_mapped().size(), 0u);
}

// The bound a reading's mapping reserves (OpenedTrace unpacking on its own thread) holds for every record type,
// and for a long trace of events.
TEST(PackedTrace, TheUnpackedSizeStaysWithinItsBound) {
  for (const TraceBuilder& b : {one_of_each_type_trace(), every_record_trace(), mixed_workload_trace(20000)}) {
    std::vector<uint8_t> packed = pack_bytes(b.bytes());
    std::optional<uint64_t> bound = packed::unpacked_size_bound(packed);
    ASSERT_TRUE(bound.has_value());
    EXPECT_GE(*bound, b.size());
    EXPECT_LT(*bound, b.size() * 80);
  }
}

// The first reading of a report takes a packed trace as it is unpacked: a Reader of map_as_it_comes() waits at
// the end of what is unpacked, and reads every record as the plain trace holds it. 300,000 pairs unpack to
// about 5 MB, handed over in pieces of 1 MiB.
TEST(PackedTrace, AReadingTakesThePackedTraceAsItIsUnpacked) {
  ScratchDir dir;
  TraceBuilder b = mixed_workload_trace(300000);
  std::string path = write_file(dir / "mixed.trace", b.bytes());
  packed::pack_file(path, 1);
  Decoded plain = decode_all(b.bytes());
  ASSERT_EQ(plain.reader->status(), Status::Complete);
  for (int reading = 0; reading < 3; ++reading) {
    trace::OpenedTrace opened(path);
    trace::Reader reader(opened.map_as_it_comes());
    EXPECT_LE(reader.file_size(), b.size());
    EXPECT_GE(reader.expected_size(), reader.file_size());
    std::vector<trace::Record> records;
    while (const trace::Record* r = reader.next()) records.push_back(*r);
    EXPECT_EQ(reader.status(), Status::Complete) << reader.error();
    EXPECT_EQ(reader.file_size(), b.size());
    EXPECT_EQ(reader.expected_size(), b.size());
    EXPECT_EQ(reader.events(), plain.reader->events());
    EXPECT_TRUE(records == plain.records) << "reading " << reading;
  }
}

// The unpacking reads each stream of the packed file once, front to back, and gives the pages it has read back
// every MiB: once unpacked, the packed file's mapping holds little of the file (a 100 M-event trace's reading
// otherwise held 300 MiB of it, docs/benchmarks.md).
TEST(PackedTrace, TheUnpackingGivesBackThePackedFilesPagesItHasRead) {
  ScratchDir dir;
  std::string path = write_file(dir / "long.trace", mixed_workload_trace(2000000).bytes());
  packed::pack_file(path, 1);
  std::string packed = std::filesystem::canonical(path).string();
  uint64_t packed_kib = std::filesystem::file_size(path) / 1024;
  ASSERT_GT(packed_kib, 6000u);
  trace::OpenedTrace opened(path);
  std::unique_ptr<trace::MappedFile> whole = opened.map();  // the unpacking has ended; its mapping stays
  long resident = resident_kib_of_mappings(packed);
  ASSERT_GE(resident, 0) << "the packed file is not mapped";
  EXPECT_LT(static_cast<uint64_t>(resident), packed_kib / 2) << resident << " KiB of " << packed_kib;
}

// A truncated trace packed (a process killed): read as it is unpacked, it ends where the plain one ends.
TEST(PackedTrace, ATruncatedPackedTraceReadAsItComesEndsWhereThePlainOneEnds) {
  ScratchDir dir;
  std::vector<uint8_t> full = mixed_workload_trace(100000).bytes();
  std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<ptrdiff_t>(full.size() * 2 / 3));
  Decoded plain = decode_all(cut);
  ASSERT_EQ(plain.reader->status(), Status::Truncated);
  std::string path = write_file(dir / "cut.trace", cut);
  packed::pack_file(path, 1);
  trace::OpenedTrace opened(path);
  trace::Reader reader(opened.map_as_it_comes());
  std::vector<trace::Record> records;
  while (const trace::Record* r = reader.next()) records.push_back(*r);
  EXPECT_EQ(reader.status(), Status::Truncated);
  EXPECT_EQ(reader.stop_offset(), plain.reader->stop_offset());
  EXPECT_TRUE(records == plain.records);
}

// Damage inside a stream is found as it is unpacked, after the reading has taken what came before it: the
// reading stops with the OpenError the opening used to throw, and a reading of the whole throws it too.
TEST(PackedTrace, DamageFoundWhileUnpackingStopsTheReadingWithItsError) {
  ScratchDir dir;
  std::string path = write_file(dir / "damaged.trace", mixed_workload_trace(300000).bytes());
  packed::pack_file(path, 1);
  ASSERT_GT(damage_free_low_stream(path), 200000u);

  trace::OpenedTrace opened(path);
  uint64_t records = 0;
  try {
    trace::Reader reader(opened.map_as_it_comes());
    while (reader.next()) ++records;
    FAIL() << "read " << records << " records to the end";
  } catch (const trace::OpenError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("corrupt packed trace: free-low: ", 0), 0u) << error.what();
  }
  EXPECT_GT(records, 100000u);
  EXPECT_THROW(opened.map(), trace::OpenError);
}

TEST(PackedTrace, TruncatedTraceUnpacksToItsWrittenRecords) {
  std::vector<uint8_t> full = every_record_trace().bytes();
  Decoded d = decode_all(full);
  for (uint64_t end : d.ends) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<ptrdiff_t>(end));
    cut.resize(cut.size() + 4096, 0);  // the zero-filled space a running writer has reserved
    packed::PackStats stats;
    std::vector<uint8_t> packed = packed::pack(cut, 3, stats);
    EXPECT_EQ(stats.complete, end == full.size());
    cut.resize(end);
    EXPECT_EQ(packed::unpack(packed), cut) << "cut at " << end;
  }
}

// The mixed workload's plain trace takes 8.6 bytes per event; packed, under 1.75: its information is about 1.7
// (a free names one of 1024 live allocations, 10 bits; an allocation one of 256 stacks and 64 sizes, 14 bits;
// the time steps about 1.5 bits per event).
TEST(PackedTrace, MixedWorkloadPacksToUnderAFifthOfItsPlainSize) {
  TraceBuilder b = mixed_workload_trace(50000);
  Decoded d = decode_all(b.bytes());
  ASSERT_EQ(d.reader->status(), Status::Complete) << d.reader->error();
  ASSERT_EQ(d.reader->events(), 98976u);
  ASSERT_EQ(b.size(), 850870u);
  packed::PackStats stats;
  std::vector<uint8_t> packed = packed::pack(b.bytes(), packed::kDefaultLevel, stats);
  EXPECT_EQ(stats.packed_bytes, packed.size());
  EXPECT_EQ(stats.events, 98976u);
  EXPECT_LT(packed.size(), 98976u * 7 / 4) << packed.size() << " bytes";
  EXPECT_LT(packed.size() * 5, b.size()) << packed.size() << " bytes";
}

// The command shows these on a terminal (`gpumemtrace pack`, `run --pack`): how far the coding is in the plain
// trace, every 4 MiB, then how much of the streams is compressed.
TEST(PackedTrace, PackingTellsHowFarItIs) {
  TraceBuilder b = mixed_workload_trace(600000);
  ASSERT_EQ(b.size(), 10277695u);
  std::vector<std::tuple<std::string, uint64_t, uint64_t>> told;
  packed::PackStats stats;
  packed::pack(b.bytes(), 1, stats, [&](std::string_view doing, uint64_t done, uint64_t total) {
    told.emplace_back(doing, done, total);
  });
  uint64_t raw = 0;
  for (uint64_t bytes : stats.raw_bytes) raw += bytes;
  ASSERT_EQ(told.size(), 3u + packed::kStreams + 1);
  uint64_t last = 0;
  for (size_t i = 0; i < 3; ++i) {
    const auto& [doing, done, total] = told[i];
    EXPECT_EQ(doing, "packing");
    EXPECT_EQ(total, b.size());
    EXPECT_GE(done, i * (uint64_t{4} << 20));
    EXPECT_LT(done, i * (uint64_t{4} << 20) + 64) << "a report per 4 MiB, at the first record boundary past it";
    EXPECT_GT(done, last);
    last = done;
  }
  EXPECT_EQ(told[3], std::make_tuple(std::string("compressing"), uint64_t{0}, raw));
  EXPECT_EQ(told[3 + packed::kStreams], std::make_tuple(std::string("compressing"), raw, raw));
  for (size_t i = 4; i < told.size(); ++i) EXPECT_GE(std::get<1>(told[i]), std::get<1>(told[i - 1]));
}

TEST(PackedTrace, DamagedPackedTraceIsAnErrorNeverACrash) {
  std::vector<uint8_t> packed = pack_bytes(every_record_trace().bytes());
  size_t errors = 0;
  for (size_t i = format::kHeaderSize; i < packed.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> damaged = packed;
      damaged[i] ^= static_cast<uint8_t>(1 << bit);
      try {
        std::vector<uint8_t> plain = packed::unpack(damaged);
        trace::Reader reader(plain);
        while (reader.next()) {
        }
      } catch (const packed::PackedError&) {
        ++errors;
      } catch (const trace::OpenError&) {
      }
    }
  }
  // zstd's checksums find almost every flipped bit in a frame.
  EXPECT_GT(errors, (packed.size() - format::kHeaderSize) * 8 * 9 / 10);
  for (size_t size = format::kHeaderSize; size < packed.size(); ++size)
    EXPECT_THROW(packed::unpack(std::span<const uint8_t>(packed.data(), size)), packed::PackedError) << size;
}

TEST(PackedTrace, DamagedPackedFileFailsToOpenAsCorrupt) {
  ScratchDir dir;
  std::vector<uint8_t> packed = pack_bytes(every_record_trace().bytes());
  packed.pop_back();
  std::string path = write_file(dir / "cut.trace", packed);
  try {
    trace::Reader reader(path);
    FAIL() << "opened";
  } catch (const trace::OpenError& error) {
    EXPECT_EQ(std::string(error.what()), "corrupt packed trace: stream others runs past the end of the file");
  }
}

TEST(PackedTrace, TraceNotAsTheWriterWritesItIsNotPacked) {
  TraceBuilder b;
  b.process(7, 1, 0, 64, -1, "host", "/bin/x", {"x"});
  b.record(trace::Device{1});  // the writer writes a Device record only before an Alloc on another device
  b.fork(3);
  packed::PackStats stats;
  try {
    packed::pack(b.bytes(), 3, stats);
    FAIL() << "packed";
  } catch (const packed::PackedError& error) {
    EXPECT_EQ(std::string(error.what()),
              "the records at byte offset 37 are not as the writer writes them: the trace is not packed");
  }
}

// The packer compares what it coded with the plain bytes in batches of 64 KiB: a record not as written, of the
// right length, past the first batch and in the middle of its own, is still named by its own offset.
TEST(PackedTrace, ARecordNotAsWrittenDeepInTheTraceIsNamedByItsOffset) {
  TraceBuilder b;
  b.process(7, 1, 0, 64, -1, "host", "/bin/x", {"x"});
  b.stack_node(0, 0x401000);
  for (uint64_t i = 0; i < 30'000; ++i) {
    b.alloc(Api::cudaMalloc, 0, 0x7f0000000000 + 4096 * (i % 8), 4096, 1, 7000);
    b.free(Api::cudaFree, 0x7f0000000000 + 4096 * (i % 8), 7000);
  }
  size_t unit = b.size();
  b.alloc(Api::cudaMalloc, 2, 0x7f0000100000, 4096, 1, 100);  // a Time and a Device record of 2 bytes each
  for (uint64_t i = 0; i < 1000; ++i)
    b.free(Api::cudaFree, 0x7f0000100000, 7000).alloc(Api::cudaMalloc, 2, 0x7f0000100000, 4096, 1, 7000);
  ASSERT_GT(unit, size_t{3} << 16);
  // The writer puts the Time before the Device record; the reader takes them either way round.
  std::vector<uint8_t> bytes = b.bytes();
  ASSERT_EQ(bytes[unit], static_cast<uint8_t>(format::Token::Time));
  ASSERT_EQ(bytes[unit + 2], static_cast<uint8_t>(format::Token::Device));
  std::rotate(bytes.begin() + static_cast<ptrdiff_t>(unit), bytes.begin() + static_cast<ptrdiff_t>(unit + 2),
              bytes.begin() + static_cast<ptrdiff_t>(unit + 4));
  trace::Reader reader(bytes);
  uint64_t records = 0;
  while (reader.next()) ++records;
  ASSERT_EQ(reader.status(), Status::Truncated) << reader.error();  // no End: read to the last byte
  ASSERT_EQ(reader.stop_offset(), bytes.size());
  EXPECT_EQ(records, 2 + 2 * 30'000 + 1 + 2 * 1000);
  packed::PackStats stats;
  try {
    packed::pack(bytes, 3, stats);
    FAIL() << "packed";
  } catch (const packed::PackedError& error) {
    EXPECT_EQ(std::string(error.what()), "the records at byte offset " + std::to_string(unit) +
                                             " are not as the writer writes them: the trace is not packed");
  }
  EXPECT_NO_THROW(packed::pack(b.bytes(), 3, stats));  // as the writer wrote it
}

TEST(PackedTrace, PackingLeavesATraceItsProcessStillWritesAlone) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = every_record_trace().bytes();
  std::string path = write_file(dir / "live.trace", bytes);
  int writer = open(path.c_str(), O_RDONLY);
  ASSERT_EQ(flock(writer, LOCK_EX), 0);  // what the trace writer holds while its process runs
  EXPECT_THROW(packed::pack_file(path, 3), packed::PackedError);
  close(writer);
  EXPECT_EQ(bytes_of(path), bytes);
  packed::pack_file(path, 3);
  EXPECT_THROW(packed::pack_file(path, 3), packed::PackedError);  // packed already
}

// Killed at any moment, packing leaves the plain trace or the whole packed one at the trace's path (and the
// last run, not killed, the packed one).
TEST(PackedTrace, KillDuringPackingLeavesATraceThatReads) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = mixed_workload_trace(200000).bytes();
  std::vector<uint8_t> packed_form = pack_bytes(bytes);
  int plain_seen = 0;
  for (int delay_us : {0, 500, 2000, 5000, 10000, 20000, 40000, 80000, 160000, 320000, -1}) {
    std::string path = write_file(dir / "killed.trace", bytes);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      packed::pack_file(path, packed::kDefaultLevel);
      _exit(0);
    }
    if (delay_us >= 0) {
      usleep(static_cast<useconds_t>(delay_us));
      kill(child, SIGKILL);
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::vector<uint8_t> now = bytes_of(path);
    if (delay_us < 0) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      EXPECT_EQ(now, packed_form);
    } else if (packed::is_packed(now)) {
      EXPECT_EQ(now, packed_form) << "killed after " << delay_us << " us";
    } else {
      ++plain_seen;
      EXPECT_EQ(now, bytes) << "killed after " << delay_us << " us";
    }
  }
  EXPECT_GT(plain_seen, 0);
}

}  // namespace
}  // namespace gpumemtrace::test
