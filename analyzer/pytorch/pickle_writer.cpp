#include "analyzer/pytorch/pickle_writer.h"

#include <bit>

#include "analyzer/pytorch/pickle_opcodes.h"
#include "common/utf8.h"

namespace gpumemtrace::pytorch {

namespace {

constexpr uint32_t kBatch = 1000;  // items per SETITEMS or APPENDS, as Python's pickler

constexpr uint8_t code(Op op) { return static_cast<uint8_t>(op); }

}  // namespace

PickleWriter::PickleWriter(std::string& out) : out_(out) {
  op(code(Op::Proto));
  op(4);
}

void PickleWriter::little_endian(uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) op(static_cast<uint8_t>(value >> (8 * i)));
}

void PickleWriter::item() {
  if (open_.empty()) return;
  Open& container = open_.back();
  uint32_t batch = container.kind == Container::Dict ? 2 * kBatch : kBatch;
  if (container.kind != Container::Tuple && container.items == batch) {
    op(code(container.kind == Container::Dict ? Op::SetItems : Op::Appends));
    op(code(Op::Mark));
    container.items = 0;
  }
  ++container.items;
}

void PickleWriter::none() {
  item();
  op(code(Op::None));
}

void PickleWriter::boolean(bool value) {
  item();
  op(code(value ? Op::NewTrue : Op::NewFalse));
}

void PickleWriter::unsigned_integer(uint64_t value) {
  if (value > INT64_MAX) {
    item();
    op(code(Op::Long1));
    op(9);  // the ninth byte, 0, keeps it positive
    little_endian(value, 8);
    op(0);
    return;
  }
  integer(static_cast<int64_t>(value));
}

void PickleWriter::integer(int64_t value) {
  item();
  if (value >= 0 && value < 0x100) {
    op(code(Op::BinInt1));
    little_endian(static_cast<uint64_t>(value), 1);
  } else if (value >= 0 && value < 0x10000) {
    op(code(Op::BinInt2));
    little_endian(static_cast<uint64_t>(value), 2);
  } else if (value >= INT32_MIN && value <= INT32_MAX) {
    op(code(Op::BinInt));
    little_endian(static_cast<uint64_t>(value), 4);
  } else {
    // The fewest bytes of two's complement that keep the sign, as Python's encode_long.
    int bytes = 8;
    while (bytes > 1) {
      int64_t shifted = value >> (8 * (bytes - 1) - 1);
      if (shifted != 0 && shifted != -1) break;
      --bytes;
    }
    op(code(Op::Long1));
    op(static_cast<uint8_t>(bytes));
    little_endian(static_cast<uint64_t>(value), bytes);
  }
}

void PickleWriter::real(double value) {
  item();
  op(code(Op::BinFloat));
  uint64_t bits = std::bit_cast<uint64_t>(value);
  for (int i = 7; i >= 0; --i) op(static_cast<uint8_t>(bits >> (8 * i)));  // big endian
}

void PickleWriter::str(std::string_view text) {
  if (!is_valid_utf8(text)) return str(valid_utf8(text));  // a pickle's strings are UTF-8; a trace's names are bytes
  item();
  if (text.size() < 0x100) {
    op(code(Op::ShortBinUnicode));
    little_endian(text.size(), 1);
  } else {
    op(code(Op::BinUnicode));
    little_endian(text.size(), 4);
  }
  out_.append(text);
}

void PickleWriter::begin_dict() {
  item();
  op(code(Op::EmptyDict));
  op(code(Op::Mark));
  open_.push_back({Container::Dict});
}

void PickleWriter::begin_list() {
  item();
  op(code(Op::EmptyList));
  op(code(Op::Mark));
  open_.push_back({Container::List});
}

void PickleWriter::begin_tuple() {
  item();
  op(code(Op::Mark));
  open_.push_back({Container::Tuple});
}

void PickleWriter::end_dict() {
  open_.pop_back();
  op(code(Op::SetItems));
}

void PickleWriter::end_list() {
  open_.pop_back();
  op(code(Op::Appends));
}

void PickleWriter::end_tuple() {
  open_.pop_back();
  op(code(Op::Tuple));
}

uint32_t PickleWriter::memoize() {
  op(code(Op::Memoize));
  return memo_size_++;
}

void PickleWriter::get(uint32_t index) {
  item();
  if (index < 0x100) {
    op(code(Op::BinGet));
    little_endian(index, 1);
  } else {
    op(code(Op::LongBinGet));
    little_endian(index, 4);
  }
}

void PickleWriter::finish() { op(code(Op::Stop)); }

}  // namespace gpumemtrace::pytorch
