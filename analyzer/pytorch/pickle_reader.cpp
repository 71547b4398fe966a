#include "analyzer/pytorch/pickle_reader.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <unordered_map>

#include "analyzer/pytorch/pickle_opcodes.h"

namespace gpumemtrace::pytorch {

namespace {

constexpr uint8_t kHighestProtocol = 5;

// The opcode of each byte value, or nullptr.
constexpr std::array<const OpInfo*, 256> kOpOfByte = [] {
  std::array<const OpInfo*, 256> table{};
  for (const OpInfo& info : kOps) table[static_cast<uint8_t>(info.op)] = &info;
  return table;
}();

}  // namespace

std::string_view pickle_kind_name(PickleKind kind) {
  constexpr std::string_view kNames[] = {"None", "bool", "int", "int", "float", "str", "bytes", "list", "tuple", "dict"};
  return kNames[static_cast<size_t>(kind)];
}

bool looks_like_pickle(std::span<const uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == static_cast<uint8_t>(Op::Proto) && bytes[1] >= 2;
}

double Pickle::real(const PickleValue& value) const { return std::bit_cast<double>(value.payload); }

// Runs the opcodes into a Pickle: the stack, the marks and the memo of Python's unpickler, for plain data.
class PickleMachine {
 public:
  PickleMachine(Pickle& out, std::span<const uint8_t> bytes) : out_(out), bytes_(bytes) {}

  Pickle::Id run() {
    while (true) {
      op_offset_ = pos_;
      if (pos_ >= bytes_.size()) fail("the pickle ends without its STOP opcode (truncated)");
      const OpInfo* info = kOpOfByte[bytes_[pos_++]];
      if (!info) fail(fmt::format("byte {:#04x} at byte offset {} is not a pickle opcode", bytes_[op_offset_], op_offset_));
      op_ = info;
      if (info->use == OpUse::Code)
        fail(fmt::format("pickle opcode {} ({:#04x}) at byte offset {} imports or calls code; only plain data "
                         "(dicts, lists, tuples, strings, numbers) is read",
                         info->name, static_cast<uint8_t>(info->op), op_offset_));
      if (info->use == OpUse::Unsupported)
        fail(fmt::format("pickle opcode {} ({:#04x}) at byte offset {} is not read (only the binary forms of plain "
                         "data that protocols 2 to 5 write)",
                         info->name, static_cast<uint8_t>(info->op), op_offset_));
      if (info->op == Op::Stop) return pop();
      step(info->op);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw PickleError(message); }
  [[noreturn]] void malformed(std::string_view what) const {
    fail(fmt::format("malformed pickle: {} at byte offset {} ({})", op_->name, op_offset_, what));
  }

  std::span<const uint8_t> take(uint64_t count) {
    if (count > bytes_.size() - pos_)
      fail(fmt::format("the pickle is truncated: {} at byte offset {} needs {} bytes, {} remain", op_->name, op_offset_,
                       count, bytes_.size() - pos_));
    std::span<const uint8_t> out = bytes_.subspan(pos_, count);
    pos_ += count;
    return out;
  }
  uint64_t little_endian(size_t count) {
    std::span<const uint8_t> raw = take(count);
    uint64_t value = 0;
    for (size_t i = count; i-- > 0;) value = value << 8 | raw[i];
    return value;
  }

  Pickle::Id add(PickleValue value) {
    if (out_.values_.size() >= UINT32_MAX) fail("the pickle has more values than this reader holds");
    out_.values_.push_back(value);
    return static_cast<Pickle::Id>(out_.values_.size() - 1);
  }
  Pickle::Id add_container(PickleKind kind, std::vector<Pickle::Id> items = {}) {
    out_.total_items_ += items.size();
    out_.containers_.push_back(std::move(items));
    return add({kind, false, 0, out_.containers_.size() - 1});
  }
  Pickle::Id add_int(bool negative, uint64_t magnitude) { return add({PickleKind::Int, negative && magnitude, 0, magnitude}); }
  void push(Pickle::Id id) { stack_.push_back(id); }
  Pickle::Id pop() {
    if (stack_.size() <= marked_floor()) malformed("the stack is empty");
    Pickle::Id id = stack_.back();
    stack_.pop_back();
    return id;
  }
  Pickle::Id top() const {
    if (stack_.size() <= marked_floor()) malformed("the stack is empty");
    return stack_.back();
  }
  size_t marked_floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // The items pushed since the last MARK, which is dropped.
  std::vector<Pickle::Id> pop_mark() {
    if (marks_.empty()) malformed("no MARK before it");
    size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<Pickle::Id> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  std::vector<Pickle::Id>& container(Pickle::Id id, PickleKind kind) {
    const PickleValue& value = out_.values_[id];
    if (value.kind != kind)
      malformed(fmt::format("it adds to a {}, not a {}", pickle_kind_name(value.kind), pickle_kind_name(kind)));
    return out_.containers_[value.payload];
  }
  void extend(Pickle::Id target, PickleKind kind, const std::vector<Pickle::Id>& items) {
    std::vector<Pickle::Id>& into = container(target, kind);
    into.insert(into.end(), items.begin(), items.end());
    out_.total_items_ += items.size();
  }
  void add_text(PickleKind kind, uint64_t length) {
    if (length > UINT32_MAX) fail(fmt::format("{} at byte offset {}: a string of {} bytes is too long", op_->name, op_offset_, length));
    uint64_t offset = pos_;
    take(length);
    push(add({kind, false, static_cast<uint32_t>(length), offset}));
  }
  // LONG1 and LONG4: a little-endian two's complement integer of `count` bytes.
  void add_long(uint64_t count) {
    std::span<const uint8_t> raw = take(count);
    bool negative = !raw.empty() && (raw.back() & 0x80);
    uint64_t magnitude = 0;
    bool big = false;
    unsigned carry = 1;
    for (size_t i = 0; i < raw.size(); ++i) {
      unsigned byte = raw[i];
      if (negative) {  // the magnitude of a negative number is its two's complement
        byte = (~byte & 0xffu) + carry;
        carry = byte >> 8;
        byte &= 0xffu;
      }
      if (i < 8)
        magnitude |= uint64_t{byte} << (8 * i);
      else if (byte != 0)
        big = true;
    }
    push(big ? add({PickleKind::BigInt, negative, 0, 0}) : add_int(negative, magnitude));
  }
  void memo_put(uint64_t index) { memo_[index] = top(); }
  void memo_get(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) malformed(fmt::format("memo entry {} was never stored", index));
    push(it->second);
  }

  void step(Op op) {
    switch (op) {
      case Op::Proto: {
        uint8_t version = take(1)[0];
        if (version > kHighestProtocol) fail(fmt::format("pickle protocol {} is newer than this reader (5)", version));
        break;
      }
      case Op::Frame:
        take(8);  // the length of the frame that follows: only a hint for buffering
        break;
      case Op::Mark:
        marks_.push_back(stack_.size());
        break;
      case Op::Pop:
        pop();
        break;
      case Op::PopMark:
        pop_mark();
        break;
      case Op::Dup:
        push(top());
        break;
      case Op::None:
        push(add({PickleKind::None, false, 0, 0}));
        break;
      case Op::NewTrue:
      case Op::NewFalse:
        push(add({PickleKind::Bool, false, 0, op == Op::NewTrue ? 1u : 0u}));
        break;
      case Op::BinInt: {
        auto value = static_cast<int32_t>(static_cast<uint32_t>(little_endian(4)));
        push(add_int(value < 0, value < 0 ? uint64_t{0} - static_cast<uint64_t>(int64_t{value}) : uint64_t(value)));
        break;
      }
      case Op::BinInt1:
        push(add_int(false, little_endian(1)));
        break;
      case Op::BinInt2:
        push(add_int(false, little_endian(2)));
        break;
      case Op::Long1:
        add_long(little_endian(1));
        break;
      case Op::Long4: {
        auto count = static_cast<int32_t>(static_cast<uint32_t>(little_endian(4)));
        if (count < 0) malformed("negative length");
        add_long(static_cast<uint64_t>(count));
        break;
      }
      case Op::BinFloat: {
        uint64_t bits = 0;
        for (uint8_t byte : take(8)) bits = bits << 8 | byte;  // big endian
        push(add({PickleKind::Float, false, 0, bits}));
        break;
      }
      case Op::ShortBinString:
      case Op::ShortBinUnicode:
        add_text(PickleKind::Str, little_endian(1));
        break;
      case Op::BinString: {
        auto count = static_cast<int32_t>(static_cast<uint32_t>(little_endian(4)));
        if (count < 0) malformed("negative length");
        add_text(PickleKind::Str, static_cast<uint64_t>(count));
        break;
      }
      case Op::BinUnicode:
        add_text(PickleKind::Str, little_endian(4));
        break;
      case Op::BinUnicode8:
        add_text(PickleKind::Str, little_endian(8));
        break;
      case Op::ShortBinBytes:
        add_text(PickleKind::Bytes, little_endian(1));
        break;
      case Op::BinBytes:
        add_text(PickleKind::Bytes, little_endian(4));
        break;
      case Op::BinBytes8:
      case Op::ByteArray8:
        add_text(PickleKind::Bytes, little_endian(8));
        break;
      case Op::EmptyList:
        push(add_container(PickleKind::List));
        break;
      case Op::EmptyTuple:
        push(add_container(PickleKind::Tuple));
        break;
      case Op::EmptyDict:
        push(add_container(PickleKind::Dict));
        break;
      case Op::List:
        push(add_container(PickleKind::List, pop_mark()));
        break;
      case Op::Tuple:
        push(add_container(PickleKind::Tuple, pop_mark()));
        break;
      case Op::Tuple1:
      case Op::Tuple2:
      case Op::Tuple3: {
        size_t count = static_cast<size_t>(op) - static_cast<size_t>(Op::Tuple1) + 1;
        std::vector<Pickle::Id> items(count);
        for (size_t i = count; i-- > 0;) items[i] = pop();
        push(add_container(PickleKind::Tuple, std::move(items)));
        break;
      }
      case Op::Dict: {
        std::vector<Pickle::Id> items = pop_mark();
        if (items.size() % 2) malformed("a key without a value");
        push(add_container(PickleKind::Dict, std::move(items)));
        break;
      }
      case Op::Append: {
        Pickle::Id item = pop();
        extend(top(), PickleKind::List, {item});
        break;
      }
      case Op::Appends: {
        std::vector<Pickle::Id> items = pop_mark();
        extend(top(), PickleKind::List, items);
        break;
      }
      case Op::SetItem: {
        Pickle::Id value = pop();
        Pickle::Id key = pop();
        extend(top(), PickleKind::Dict, {key, value});
        break;
      }
      case Op::SetItems: {
        std::vector<Pickle::Id> items = pop_mark();
        if (items.size() % 2) malformed("a key without a value");
        extend(top(), PickleKind::Dict, items);
        break;
      }
      case Op::BinPut:
        memo_put(little_endian(1));
        break;
      case Op::LongBinPut:
        memo_put(little_endian(4));
        break;
      case Op::Memoize:
        memo_put(memo_.size());
        break;
      case Op::BinGet:
        memo_get(little_endian(1));
        break;
      case Op::LongBinGet:
        memo_get(little_endian(4));
        break;
      default:
        malformed("not handled");  // the table and this switch disagree
    }
  }

  Pickle& out_;
  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
  uint64_t op_offset_ = 0;
  const OpInfo* op_ = nullptr;
  std::vector<Pickle::Id> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Pickle::Id> memo_;
};

Pickle::Pickle(std::span<const uint8_t> bytes) : bytes_(bytes) { root_ = PickleMachine(*this, bytes).run(); }

}  // namespace gpumemtrace::pytorch
