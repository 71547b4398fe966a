// One stream of bytes as a zstd frame: written whole (the packer), read piece by piece (the unpacker holds a
// window of decompressed bytes per stream, whatever the length of the trace).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpumemtrace/trace_format.h"

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace gpumemtrace::packed {

// The frames' largest window (2^23 bytes): what the unpacker allows, so a damaged frame cannot ask for more.
// Traces packed before 2026-11-29 (sixth session) have windows this large.
inline constexpr int kWindowLog = 23;
// The window the packer gives its frames (2^21 bytes). The unpacker reads all 19 streams at once and holds a
// window for each: 2^23 made a 100 M-event trace's reading hold 145 MiB, 2^21 75 MiB, for 0.01 % fewer
// bytes (docs/benchmarks.md).
inline constexpr int kPackedWindowLog = 21;

// Bytes that do not decode: what is wrong, for "corrupt packed trace: ...".
class PackedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Compresses streams one after another, each as one frame, with one zstd context (at level 19 it takes about
// 90 MiB). Reused, the context keeps its tables instead of allocating and clearing them for every stream:
// the same frames, 7 % less of packing's CPU on a repetitive trace (docs/benchmarks.md).
//
// A level's match search was most of packing's zstd time, and on some streams it finds nothing that level 1
// does not: nearly random bytes (the low byte of a stack drawn at random) and small values without long
// repeats (the high bytes of a live allocation's place), which level 1 codes smaller still. So each stream
// takes the level only where it does better than level 1 on the stream's first kSampleBytes; else level 1.
class ZstdCompressor {
 public:
  explicit ZstdCompressor(int level);
  ZstdCompressor(const ZstdCompressor&) = delete;
  ZstdCompressor& operator=(const ZstdCompressor&) = delete;
  ~ZstdCompressor();

  std::vector<uint8_t> frame(std::span<const uint8_t> bytes);

  static constexpr int kFastLevel = 1;
  static constexpr size_t kSampleBytes = size_t{64} << 10;

 private:
  // Compresses at `level` into scratch_; the frame's size.
  size_t compress(std::span<const uint8_t> bytes, int level);
  // The level that codes the stream's sample smaller: the level asked for, or kFastLevel.
  int level_for(std::span<const uint8_t> bytes);

  ZSTD_CCtx_s* context_;
  int level_;
  std::unique_ptr<uint8_t[]> scratch_;  // room for the largest frame so far, never cleared
  size_t scratch_size_ = 0;
};

// A stream's bytes, kept until the end and then compressed at once: zstd then sizes its tables to the stream.
class ZstdWriter {
 public:
  void byte(uint8_t value) {
    room(1);
    *next_++ = value;
  }
  void varint(uint64_t value) {
    room(format::kMaxVarintBytes);
    next_ = format::put_varint(next_, value);
  }
  // A value as a Low/High pair (packed_format.h): its low byte here, the rest as a varint in `high`.
  void split(uint64_t value, ZstdWriter& high) {
    byte(static_cast<uint8_t>(value));
    high.varint(value >> 8);
  }
  void bytes(std::span<const uint8_t> values) {
    room(values.size());
    next_ = std::copy(values.begin(), values.end(), next_);
  }
  uint64_t raw_bytes() const { return used(); }
  // The stream as one zstd frame; its bytes are given back.
  std::vector<uint8_t> compress(ZstdCompressor& compressor);

 private:
  // raw_ is grown ahead and written in place through next_: appending a byte or a varint is a store and a
  // compare, not a vector insert.
  void room(size_t bytes) {
    if (static_cast<size_t>(limit_ - next_) < bytes) grow(bytes);
  }
  void grow(size_t bytes);
  size_t used() const { return static_cast<size_t>(next_ - raw_.data()); }

  std::vector<uint8_t> raw_;
  uint8_t* next_ = nullptr;   // the end of the stream's bytes in raw_
  uint8_t* limit_ = nullptr;  // the end of raw_
};

// The size a frame's header gives for its stream's bytes; none when it does not give one.
std::optional<uint64_t> stream_size(std::span<const uint8_t> frame);

// Told a part of a frame that has been read and will not be read again (the mapping may give its pages back).
using ReadBehind = std::function<void(std::span<const uint8_t> read)>;

class ZstdReader {
 public:
  // `read_behind`, when set, is told the frame's read prefix every kReadBehindStep bytes and at its end; it must
  // outlive this.
  ZstdReader(std::span<const uint8_t> frame, std::string_view name, const ReadBehind* read_behind = nullptr);
  ZstdReader(const ZstdReader&) = delete;
  ZstdReader& operator=(const ZstdReader&) = delete;
  ~ZstdReader();

  bool at_end() {
    return position_ == end_ && !refill();
  }
  uint8_t byte() {
    if (position_ == end_ && !refill()) ended_early();
    return *position_++;
  }
  uint64_t varint() {
    uint64_t value = 0;
    for (unsigned i = 0; i < format::kMaxVarintBytes; ++i) {
      uint8_t b = byte();
      if (i == format::kMaxVarintBytes - 1 && b > 1) break;
      value |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
      if (!(b & 0x80)) return value;
    }
    throw PackedError(std::string(name_) + ": a varint is longer than 64 bits");
  }
  uint64_t split(ZstdReader& high) {
    uint64_t low = byte();
    uint64_t rest = high.varint();
    if (rest >> 56) throw PackedError(std::string(high.name_) + ": a value is longer than 64 bits");
    return rest << 8 | low;
  }
  // `count` bytes appended to `out`.
  void bytes(uint64_t count, std::vector<uint8_t>& out);
  // Compressed bytes read so far, of frame_size().
  uint64_t consumed() const { return consumed_; }
  uint64_t frame_size() const { return frame_.size(); }

 private:
  bool refill();
  [[noreturn]] void ended_early() const;

  static constexpr size_t kReadBehindStep = size_t{1} << 20;

  ZSTD_DCtx_s* context_;
  std::span<const uint8_t> frame_;
  size_t consumed_ = 0;
  const ReadBehind* read_behind_;
  size_t told_ = 0;  // the prefix read_behind_ was last told of
  bool frame_ended_ = false;  // the last call that decoded something finished the frame
  std::string_view name_;
  std::vector<uint8_t> window_;
  const uint8_t* position_ = nullptr;
  const uint8_t* end_ = nullptr;
};

}  // namespace gpumemtrace::packed
