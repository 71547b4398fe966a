// Encodes records (include/gpumemtrace/trace_records.h) into bytes, for the trace writer and for the
// tests' trace builder. It keeps what the encoding depends on: the last Alloc/Free address (addresses are
// deltas from it), the last size per stack (sizes are deltas from it) and the device of the Alloc records.
//
// `put(out, record)` takes its space from `out`:
//   uint8_t* reserve(size_t max_bytes)                        room for a record at the end, or nullptr
//   void finish(uint8_t* start, uint8_t* end, uint8_t token)  stores the token at start, last; keeps [start, end)
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gpumemtrace/trace_records.h"

namespace gpumemtrace::writer {

class RecordEncoder {
 public:
  // A new trace: no address, sizes or device yet.
  void restart() {
    last_address_ = 0;
    device_ = trace::kNoDevice;
    last_size_by_stack_.assign(1, 0);
  }

  // Writes the record; an Alloc on another device than the last one writes a Device record first. False
  // when `out` had no room.
  template <typename Out, typename R>
  bool put(Out& out, const R& record) {
    if constexpr (std::is_same_v<R, trace::Alloc>) {
      if (record.device != device_) {
        put(out, trace::Device{record.device});
        device_ = record.device;
      }
    }
    uint8_t* start = out.reserve(max_bytes(record));
    if (!start) return false;
    out.finish(start, body(start + 1, record), token(record));
    if constexpr (std::is_same_v<R, trace::StacksReset>) last_size_by_stack_.assign(1, 0);
    return true;
  }

 private:
  using Token = format::Token;
  static constexpr size_t kV = format::kMaxVarintBytes;

  // Each kind of field as it is stored: varints and bytes, given to Put (counted or written).
  template <typename Put>
  struct Stored {
    Put put;
    void u(std::string_view, uint64_t value, trace::As = trace::As::Number) { put.varint(value); }
    void s(std::string_view, int64_t value) { put.varint(format::zigzag(value)); }
    void str(std::string_view, std::string_view text, trace::As = trace::As::Text) {
      put.varint(text.size());
      put.bytes(text);
    }
    void strs(std::string_view, std::span<const std::string_view> texts) {
      put.varint(texts.size());
      for (std::string_view text : texts) str({}, text);
    }
    void device(std::string_view, int32_t device) { put.varint(device < 0 ? 0 : static_cast<uint64_t>(device) + 1); }
    void alloc_api(std::string_view, trace::Api api) { put.varint(static_cast<uint64_t>(api)); }
    void free_api(std::string_view, trace::Api api) { put.varint(static_cast<uint64_t>(api)); }
    void stack(std::string_view, uint32_t id) { put.varint(id); }
    void implicit(std::string_view, uint64_t) {}
  };
  struct Count {
    size_t total = 1;  // the token
    void varint(uint64_t) { total += kV; }
    void bytes(std::string_view text) { total += text.size(); }
  };
  struct Write {
    uint8_t* p;
    void varint(uint64_t value) { p = format::put_varint(p, value); }
    void bytes(std::string_view text) {
      if (text.empty()) return;  // an empty view may have no data: memcpy must not see its null pointer
      std::memcpy(p, text.data(), text.size());
      p += text.size();
    }
  };

  template <typename R>
  static size_t max_bytes(const R& record) {
    Stored<Count> count{};
    R::fields(record, count);
    return count.put.total;
  }
  template <typename R>
  uint8_t* body(uint8_t* p, const R& record) {
    Stored<Write> write{{p}};
    R::fields(record, write);
    return write.put.p;
  }
  template <typename R>
  static uint8_t token(const R&) {
    return static_cast<uint8_t>(R::kToken);
  }

  // Alloc and Free, the hot path: stored by hand (see their declarations).
  static size_t max_bytes(const trace::Alloc&) { return 1 + 5 * kV; }
  static size_t max_bytes(const trace::Free&) { return 1 + 2 * kV; }
  static uint8_t token(const trace::Alloc& r) { return with_api(Token::AllocBase, r.api); }
  static uint8_t token(const trace::Free& r) { return with_api(Token::FreeBase, r.api); }
  static uint8_t with_api(Token base, trace::Api api) { return static_cast<uint8_t>(base) | static_cast<uint8_t>(api); }
  uint8_t* body(uint8_t* p, const trace::Alloc& r) {
    const format::ApiInfo& info = format::api_info(r.api);
    if (r.stack >= last_size_by_stack_.size()) last_size_by_stack_.resize(r.stack + 1, 0);
    uint64_t& last_size = last_size_by_stack_[r.stack];
    p = format::put_varint(p, format::zigzag(static_cast<int64_t>(r.address - last_address_)));
    p = format::put_varint(p, r.stack);
    p = format::put_varint(p, format::zigzag(static_cast<int64_t>(r.size - last_size)));
    if (info.takes_stream) p = format::put_varint(p, r.stream);
    if (info.takes_pool) p = format::put_varint(p, r.pool);
    last_address_ = r.address;
    last_size = r.size;
    return p;
  }
  uint8_t* body(uint8_t* p, const trace::Free& r) {
    p = format::put_varint(p, format::zigzag(static_cast<int64_t>(r.address - last_address_)));
    if (format::api_info(r.api).takes_stream) p = format::put_varint(p, r.stream);
    last_address_ = r.address;
    return p;
  }

  uint64_t last_address_ = 0;
  int32_t device_ = trace::kNoDevice;
  std::vector<uint64_t> last_size_by_stack_ = std::vector<uint64_t>(1, 0);  // indexed by stack id
};

}  // namespace gpumemtrace::writer
