#include "analyzer/pytorch/pickle_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>

#include "analyzer/pytorch/pickle_memo.h"
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
  // Markers while a batch is forgotten; no value has these ids (add() stops before them).
  static constexpr Pickle::Id kGone = UINT32_MAX, kKept = UINT32_MAX - 1, kItem = UINT32_MAX - 2;
  static constexpr Pickle::Id kFirstMarker = kItem;
  // A MARK: where its items start on the stack, and what a batch that it starts made.
  struct Mark {
    size_t position = 0;
    Pickle::Id values_at = 0;      // the first value made after it
    size_t containers_at = 0;      // the first container made after it
    uint64_t items_at = 0;         // where the items of the containers made after it start
    size_t memo_log_at = 0;        // the first memo entry stored after it
    Pickle::Id oldest_extended = kGone;  // the oldest container appended to since
    bool forgot_inside = false;          // a batch inside it was forgotten
  };

 public:
  PickleMachine(Pickle& out, std::span<const uint8_t> bytes, PickleListSink* sink)
      : out_(out), bytes_(bytes), sink_(sink) {}

  [[gnu::flatten]] Pickle::Id run() {
    while (true) {
      op_offset_ = pos_;
      if (pos_ >= bytes_.size()) fail("the pickle ends without its STOP opcode (truncated)");
      const OpInfo* info = kOpOfByte[bytes_[pos_++]];
      if (!info || info->use != OpUse::Data) [[unlikely]]
        refuse(info);
      op_ = info;
      if (info->op == Op::Stop) return pop();
      step(info->op);
    }
  }

 private:
  // The failures are out of line and cold, and the steps inlined into the loop (run() is flattened): a
  // snapshot's history is tens of millions of opcodes, and calls were half of the instructions each one took.
  [[noreturn, gnu::cold, gnu::noinline]] void refuse(const OpInfo* info) const {
    if (!info) fail(fmt::format("byte {:#04x} at byte offset {} is not a pickle opcode", bytes_[op_offset_], op_offset_));
    if (info->use == OpUse::Code)
      fail(fmt::format("pickle opcode {} ({:#04x}) at byte offset {} imports or calls code; only plain data "
                       "(dicts, lists, tuples, strings, numbers) is read",
                       info->name, static_cast<uint8_t>(info->op), op_offset_));
    fail(fmt::format("pickle opcode {} ({:#04x}) at byte offset {} is not read (only the binary forms of plain "
                     "data that protocols 2 to 5 write)",
                     info->name, static_cast<uint8_t>(info->op), op_offset_));
  }

  [[noreturn, gnu::cold, gnu::noinline]] void fail(std::string_view message) const {
    throw PickleError(std::string(message));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void malformed(std::string_view what) const {
    fail(fmt::format("malformed pickle: {} at byte offset {} ({})", op_->name, op_offset_, what));
  }

  [[noreturn, gnu::cold, gnu::noinline]] void truncated(uint64_t count) const {
    fail(fmt::format("the pickle is truncated: {} at byte offset {} needs {} bytes, {} remain", op_->name, op_offset_,
                     count, bytes_.size() - pos_));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void too_long(uint64_t length) const {
    fail(fmt::format("{} at byte offset {}: a string of {} bytes is too long", op_->name, op_offset_, length));
  }

  std::span<const uint8_t> take(uint64_t count) {
    if (count > bytes_.size() - pos_) [[unlikely]]
      truncated(count);
    std::span<const uint8_t> out = bytes_.subspan(pos_, count);
    pos_ += count;
    return out;
  }
  uint64_t little_endian(size_t count) {
    std::span<const uint8_t> raw = take(count);
    if (count == 1) return raw[0];  // the arguments of the commonest opcodes
    uint64_t value = 0;
    for (size_t i = count; i-- > 0;) value = value << 8 | raw[i];
    return value;
  }

  Pickle::Id add(PickleValue value) {
    if (out_.values_.size() >= kFirstMarker) [[unlikely]]
      fail("the pickle has more values than this reader holds");
    out_.values_.push_back(value);
    ++out_.total_values_;
    return static_cast<Pickle::Id>(out_.values_.size() - 1);
  }
  Pickle::Id add_container(PickleKind kind, std::span<const Pickle::Id> items = {}) {
    if (items.size() > UINT32_MAX) fail("a container of the pickle has more items than this reader holds");
    out_.total_items_ += items.size();
    auto size = static_cast<uint32_t>(items.size());
    out_.containers_.push_back({out_.items_.size(), size, size});
    out_.items_.insert(out_.items_.end(), items.begin(), items.end());
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
  size_t marked_floor() const { return marks_.empty() ? 0 : marks_.back().position; }
  // The items pushed since the last MARK, which is dropped (into `popped` when asked for: then the caller
  // may still forget the batch, and empties the memo's log when no mark is left).
  const std::vector<Pickle::Id>& pop_mark(Mark* popped = nullptr) {
    if (marks_.empty()) malformed("no MARK before it");
    Mark mark = marks_.back();
    marks_.pop_back();
    if (marks_.empty()) {
      if (!popped) memo_log_.clear();  // no batch is open to be forgotten
    } else {
      marks_.back().oldest_extended = std::min(marks_.back().oldest_extended, mark.oldest_extended);
      marks_.back().forgot_inside = marks_.back().forgot_inside || mark.forgot_inside;
    }
    marked_.assign(stack_.begin() + static_cast<std::ptrdiff_t>(mark.position), stack_.end());
    stack_.resize(mark.position);
    if (popped) *popped = mark;
    return marked_;
  }
  void extend(Pickle::Id target, PickleKind kind, std::span<const Pickle::Id> items) {
    const PickleValue& value = out_.values_[target];
    if (value.kind != kind)
      malformed(fmt::format("it adds to a {}, not a {}", pickle_kind_name(value.kind), pickle_kind_name(kind)));
    Pickle::Container& into = out_.containers_[value.payload];
    if (items.size() > UINT32_MAX - into.size) fail("a container of the pickle has more items than this reader holds");
    if (!marks_.empty()) marks_.back().oldest_extended = std::min(marks_.back().oldest_extended, target);
    std::vector<Pickle::Id>& all = out_.items_;
    auto size = static_cast<uint32_t>(items.size());
    if (into.start + into.size == all.size()) {  // the last: it grows in place
      into.capacity = std::max(into.capacity, into.size + size);
    } else if (into.size + size > into.capacity) {  // moves to the end, with room to grow again
      uint64_t start = all.size();
      all.resize(start + std::max<uint64_t>(into.size + size, uint64_t{2} * into.size));
      std::copy_n(all.begin() + static_cast<ptrdiff_t>(into.start), into.size, all.begin() + static_cast<ptrdiff_t>(start));
      into.start = start;
      into.capacity = static_cast<uint32_t>(std::min<uint64_t>(all.size() - start, UINT32_MAX));
    }
    if (into.start + into.size == all.size())
      all.insert(all.end(), items.begin(), items.end());
    else
      std::copy(items.begin(), items.end(), all.begin() + static_cast<ptrdiff_t>(into.start + into.size));
    into.size += size;
    out_.total_items_ += items.size();
  }
  void add_text(PickleKind kind, uint64_t length) {
    if (length > UINT32_MAX) [[unlikely]]
      too_long(length);
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
  void memo_put(uint64_t index) {
    memo_.put(index, top());
    if (sink_ && !marks_.empty()) memo_log_.push_back(index);
  }
  void memo_get(uint64_t index) {
    const Pickle::Id* id = memo_.find(index);
    if (!id) malformed(fmt::format("memo entry {} was never stored", index));
    // Only a streaming read forgets: the caller reads the pickle again whole, where this is no error.
    if (*id == PickleMemo::kForgotten) malformed(fmt::format("memo entry {} refers to a value already forgotten", index));
    push(*id);
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
        marks_.push_back({.position = stack_.size(),
                          .values_at = static_cast<Pickle::Id>(out_.values_.size()),
                          .containers_at = out_.containers_.size(),
                          .items_at = out_.items_.size(),
                          .memo_log_at = memo_log_.size()});
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
        std::array<Pickle::Id, 3> items{};
        for (size_t i = count; i-- > 0;) items[i] = pop();
        push(add_container(PickleKind::Tuple, std::span<const Pickle::Id>(items).first(count)));
        break;
      }
      case Op::Dict: {
        const std::vector<Pickle::Id>& items = pop_mark();
        if (items.size() % 2) malformed("a key without a value");
        push(add_container(PickleKind::Dict, items));
        break;
      }
      case Op::Append: {
        marked_.assign(1, pop());
        if (!sink_takes(top()))
          extend(top(), PickleKind::List, marked_);
        else
          give(top(), marked_, nullptr);
        break;
      }
      case Op::Appends: {
        Mark mark;
        const std::vector<Pickle::Id>& items = pop_mark(&mark);
        if (!sink_takes(top()))
          extend(top(), PickleKind::List, items);
        else
          give(top(), items, &mark);
        if (marks_.empty()) memo_log_.clear();
        break;
      }
      case Op::SetItem: {
        Pickle::Id value = pop();
        Pickle::Id key = pop();
        std::array<Pickle::Id, 2> pair = {key, value};
        extend(top(), PickleKind::Dict, pair);
        break;
      }
      case Op::SetItems: {
        const std::vector<Pickle::Id>& items = pop_mark();
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

  bool sink_takes(Pickle::Id list) {
    if (!sink_ || out_.values_[list].kind != PickleKind::List) return false;
    return sink_->takes(out_, std::span<const Pickle::Id>(stack_).first(stack_.size() - 1), list);
  }

  // Hands the items appended to `list` to the sink; after a batch (`mark`), forgets the values it made
  // that nothing kept refers to.
  void give(Pickle::Id list, const std::vector<Pickle::Id>& items, const Mark* mark) {
    keep_.clear();
    for (Pickle::Id item : items) sink_->take(out_, list, item, keep_);
    out_.total_items_ += items.size();
    // Forgotten only when nothing older than the batch was appended to inside it (it would refer to the
    // batch's values) and no batch inside it was forgotten already (its memo entries are not logged).
    if (!mark || mark->oldest_extended < mark->values_at || mark->forgot_inside) return;
    forget(*mark, items);
    if (!marks_.empty()) marks_.back().forgot_inside = true;
  }

  void forget(const Mark& mark, const std::vector<Pickle::Id>& items) {
    Pickle::Id first = mark.values_at;
    size_t count = out_.values_.size() - first;
    std::vector<Pickle::Id>& number = renumbered_;
    number.assign(count, kGone);
    auto in_batch = [&](Pickle::Id id) { return id >= first && id - first < count; };
    for (Pickle::Id item : items)
      if (in_batch(item)) number[item - first] = kItem;
    // What stays: the values the sink keeps, those the memo keeps but the items, and what they hold.
    std::vector<Pickle::Id>& work = work_;
    work.clear();
    auto reach = [&](Pickle::Id id) {
      if (in_batch(id) && number[id - first] != kKept) {
        number[id - first] = kKept;
        work.push_back(id);
      }
    };
    for (Pickle::Id id : keep_) reach(id);
    std::span<uint64_t> logged(memo_log_.begin() + static_cast<std::ptrdiff_t>(mark.memo_log_at), memo_log_.end());
    if (!std::is_sorted(logged.begin(), logged.end())) std::sort(logged.begin(), logged.end());  // MEMOIZE's are
    logged = logged.first(static_cast<size_t>(std::unique(logged.begin(), logged.end()) - logged.begin()));
    for (uint64_t index : logged) {
      const Pickle::Id* id = memo_.find(index);
      if (id && in_batch(*id) && number[*id - first] != kItem) reach(*id);
    }
    while (!work.empty()) {
      const PickleValue& value = out_.values_[work.back()];
      work.pop_back();
      if (value.kind == PickleKind::List || value.kind == PickleKind::Tuple || value.kind == PickleKind::Dict)
        for (Pickle::Id id : out_.items(value)) reach(id);
    }
    // Renumbered in order, containers too (a container made later has a later index), each moved down.
    // The items of the containers made in the batch are from mark.items_at on (an older container that grew
    // in it would have stopped the forgetting), in any order (one that grew moved to the end): those kept are
    // gathered, then put back there.
    Pickle::Id next = first;
    size_t next_container = mark.containers_at;
    std::vector<Pickle::Id>& kept_items = work_;
    kept_items.clear();
    for (size_t i = 0; i < count; ++i) number[i] = number[i] == kKept ? next++ : kGone;
    for (size_t i = 0; i < count; ++i) {
      if (number[i] == kGone) continue;
      PickleValue value = out_.values_[first + i];
      if (value.kind == PickleKind::List || value.kind == PickleKind::Tuple || value.kind == PickleKind::Dict) {
        const Pickle::Container& held = out_.containers_[value.payload];
        uint64_t start = mark.items_at + kept_items.size();
        for (Pickle::Id id : out_.items(value)) kept_items.push_back(in_batch(id) ? number[id - first] : id);
        out_.containers_[next_container] = {start, held.size, held.size};
        value.payload = next_container++;
      }
      out_.values_[number[i]] = value;
    }
    out_.values_.resize(next);
    out_.containers_.resize(next_container);
    out_.items_.resize(mark.items_at);
    out_.items_.insert(out_.items_.end(), kept_items.begin(), kept_items.end());
    for (uint64_t index : logged) {
      Pickle::Id* id = memo_.find(index);
      if (id && in_batch(*id)) *id = number[*id - first] == kGone ? PickleMemo::kForgotten : number[*id - first];
    }
    memo_log_.resize(mark.memo_log_at);
    sink_->renumber(first, number);
    sink_->read_to(pos_);
  }

  Pickle& out_;
  std::span<const uint8_t> bytes_;
  PickleListSink* sink_ = nullptr;
  uint64_t pos_ = 0;
  uint64_t op_offset_ = 0;
  const OpInfo* op_ = nullptr;
  std::vector<Pickle::Id> stack_;
  std::vector<Mark> marks_;
  PickleMemo memo_;
  std::vector<uint64_t> memo_log_;  // the memo entries stored inside marks, while a sink takes items
  std::vector<Pickle::Id> keep_, renumbered_, work_;
  std::vector<Pickle::Id> marked_;  // the items pop_mark() took last
};

Pickle::Pickle(std::span<const uint8_t> bytes, PickleListSink* sink) : bytes_(bytes) {
  root_ = PickleMachine(*this, bytes, sink).run();
}

}  // namespace gpumemtrace::pytorch
