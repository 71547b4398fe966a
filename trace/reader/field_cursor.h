// Reads the fields of one record: varints, zig-zag varints and strings, never past the end of the data.
// A failure is sticky (later reads return 0 and nothing more is consumed), so a record's decoder reads all
// its fields and checks failure() once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpumemtrace/trace_format.h"

namespace gpumemtrace::trace {

class FieldCursor {
 public:
  enum class Failure : uint8_t {
    None,
    EndOfData,       // the data ends inside the record: a truncated tail
    VarintOverflow,  // more than 64 bits: corrupt
    StringTooLong,   // longer than the rest of the file and than any string the format writes: corrupt
  };
  // A string running past the end of the data up to this length is taken for a cut record, beyond it
  // for damage. The format writes paths, names and argv entries (at most 128 KiB each on Linux).
  static constexpr uint64_t kMaxPlausibleString = uint64_t{1} << 20;

  FieldCursor(const uint8_t* begin, const uint8_t* end) : p_(begin), end_(end) {}

  uint64_t u() {
    if (p_ < end_ && *p_ < 0x80) return *p_++;
    return u_multibyte();
  }
  int64_t s() { return format::unzigzag(u()); }
  std::string_view str();

  Failure failure() const { return failure_; }
  const uint8_t* position() const { return p_; }
  const uint8_t* failure_position() const { return failure_at_; }

 private:
  uint64_t u_multibyte();
  void fail(Failure failure) {
    if (failure_ == Failure::None) {
      failure_ = failure;
      failure_at_ = p_;
    }
    p_ = end_;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  Failure failure_ = Failure::None;
  const uint8_t* failure_at_ = nullptr;
};

inline uint64_t FieldCursor::u_multibyte() {
  const uint8_t* start = p_;
  uint64_t value = 0;
  // Room for the longest varint: no byte needs the end checked (a quarter of a plain trace's decoding went to
  // the checks of the loop below).
  if (end_ - p_ >= static_cast<ptrdiff_t>(format::kMaxVarintBytes)) {
#pragma GCC unroll 9
    for (unsigned i = 0; i < format::kMaxVarintBytes - 1; ++i) {
      uint64_t byte = p_[i];
      value |= (byte & 0x7F) << (7 * i);
      if (byte < 0x80) {
        p_ += i + 1;
        return value;
      }
    }
    uint64_t last = p_[format::kMaxVarintBytes - 1];
    if (last > 1) {  // the 10th byte holds bit 63 only
      fail(Failure::VarintOverflow);
      return 0;
    }
    p_ += format::kMaxVarintBytes;
    return value | last << 63;
  }
  for (unsigned i = 0; i < format::kMaxVarintBytes; ++i) {
    if (p_ == end_) {
      p_ = start;
      fail(Failure::EndOfData);
      return 0;
    }
    uint8_t byte = *p_++;
    if (i == format::kMaxVarintBytes - 1 && byte > 1) break;  // the 10th byte holds bit 63 only
    value |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
    if (!(byte & 0x80)) return value;
  }
  p_ = start;
  fail(Failure::VarintOverflow);
  return 0;
}

inline std::string_view FieldCursor::str() {
  const uint8_t* start = p_;
  uint64_t length = u();
  if (failure_ != Failure::None) return {};
  if (length > static_cast<uint64_t>(end_ - p_)) {
    p_ = start;
    fail(length <= kMaxPlausibleString ? Failure::EndOfData : Failure::StringTooLong);
    return {};
  }
  std::string_view out(reinterpret_cast<const char*>(p_), static_cast<size_t>(length));
  p_ += length;
  return out;
}

}  // namespace gpumemtrace::trace
