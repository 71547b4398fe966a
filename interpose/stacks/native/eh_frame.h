// Reading the DWARF unwind tables of a loaded object: .eh_frame_hdr's search table, and the CIE and FDE
// records of .eh_frame (the LSB's "Exception Frames" layout), with every read bounded by its record.
#pragma once

#include <cstdint>
#include <cstring>

namespace gpumemtrace::interpose::eh_frame {

// Bounded little-endian reads of unwind tables; a read past the end clears ok.
class Bytes {
 public:
  Bytes(const uint8_t* pos, const uint8_t* end) : pos_(pos), end_(end) {}
  bool ok() const { return ok_; }
  bool more() const { return ok_ && pos_ < end_; }
  const uint8_t* pos() const { return pos_; }
  size_t left() const { return ok_ ? static_cast<size_t>(end_ - pos_) : 0; }
  void fail() { ok_ = false; }

  template <typename T>
  T fixed() {
    T value{};
    if (!take(sizeof(T))) return value;
    std::memcpy(&value, pos_ - sizeof(T), sizeof(T));
    return value;
  }
  uint8_t u8() { return fixed<uint8_t>(); }
  uint64_t uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      uint8_t byte = u8();
      value |= uint64_t{byte & 0x7fu} << shift;
      if (!(byte & 0x80) || !ok_) return value;
    }
    fail();
    return 0;
  }
  int64_t sleb() {
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      uint8_t byte = u8();
      value |= uint64_t{byte & 0x7fu} << shift;
      if (!(byte & 0x80) || !ok_) {
        if ((byte & 0x40) && shift + 7 < 64) value |= ~uint64_t{0} << (shift + 7);
        return static_cast<int64_t>(value);
      }
    }
    fail();
    return 0;
  }
  bool skip(uint64_t n) { return take(n); }
  // The next n bytes as their own reader, skipped here; a failed one (ok() false) if they are not all there.
  Bytes sub(uint64_t n) {
    const uint8_t* start = pos_;
    if (take(n)) return Bytes(start, pos_);
    Bytes none(start, start);
    none.fail();
    return none;
  }

 private:
  bool take(uint64_t n) {
    if (!ok_ || static_cast<uint64_t>(end_ - pos_) < n) {
      ok_ = false;
      return false;
    }
    pos_ += n;
    return true;
  }

  const uint8_t* pos_;
  const uint8_t* end_;
  bool ok_ = true;
};

// A DW_EH_PE_* value's stored form (the low four bits), without its application.
bool read_format(Bytes& in, uint8_t encoding, uint64_t& out);

// An encoded address: absolute, pc-relative or relative to `data_base` (never indirect for code).
bool read_address(Bytes& in, uint8_t encoding, uintptr_t data_base, uintptr_t& out);

// A Common Information Entry: what the FDEs that point to it share.
struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = 1;
  uint8_t fde_encoding = 0x00;  // absptr unless 'R' says otherwise
  bool augmented = false;       // 'z': FDEs carry an augmentation length
  Bytes instructions{nullptr, nullptr};
};

// The CIE at `at`. False for anything this reader does not support ('S' signal frames among them).
bool read_cie(const uint8_t* at, Cie& cie);

// A Frame Description Entry: the code range it covers and its call frame instructions.
struct Fde {
  Cie cie;
  uintptr_t begin = 0;
  uint64_t range = 0;
  Bytes instructions{nullptr, nullptr};
};

// The FDE covering pc in an object, from its .eh_frame_hdr (`header`). False when none covers it.
bool find_fde(const uint8_t* header, uintptr_t pc, Fde& fde);

}  // namespace gpumemtrace::interpose::eh_frame
